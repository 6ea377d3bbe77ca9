// The team makers: the PE arithmetic of a strided set, plus the team's workspace. Every team's
// workspace has the size the largest team (the world) needs, so makers that build different
// teams on different PEs (team_node) still make the same allocation everywhere.
#include "tessera/team.hpp"

#include <cstdint>
#include <string>
#include <vector>

#include "ops/collective_support.hpp"
#include "ops/heap_fill.hpp"
#include "runtime/op_support.hpp"

namespace tessera {
namespace {

[[noreturn]] void fail(int pe, const std::string& what, const std::string& message) {
  throw Error(ErrorCode::invalid_argument, pe, what + ": " + message);
}

std::string describe(const Team& t) {
  return "(start " + std::to_string(t.start) + ", stride " + std::to_string(t.stride) + ", size " +
         std::to_string(t.size) + ")";
}

// Collective: gives `team` its zeroed workspace (the collectives' staging and signals, then the
// agreement records of ops/collective_support.hpp, then the device team barrier's words at its
// end: device::TeamBarrierWords), visible to every PE before any uses it.
Team with_workspace(Runtime& rt, Team team) {
  const std::size_t bytes = team_workspace_size(rt);
  team.workspace = rt.malloc(bytes, 64);
  team.workspace_bytes = bytes;
  detail::zero_heap(rt, team.workspace, bytes);
  ops::support::team_epochs(rt).forget(team.workspace);
  // No member may signal into the words before every PE has zeroed its own.
  rt.barrier();
  return team;
}

Team strided(int me, int start, int stride, int size) {
  Team t;
  t.start = start;
  t.stride = stride;
  t.size = size;
  t.my_rank = t.rank_of(me);
  return t;
}

}  // namespace

Team team_world(Runtime& rt) {
  detail::check_op_call(rt, "team_world", "team_world");
  return with_workspace(rt, strided(rt.pe(), 0, 1, rt.n_pes()));
}

Team team_node(Runtime& rt) {
  detail::check_op_call(rt, "team_node", "team_node");
  std::vector<int> nodes(static_cast<std::size_t>(rt.n_pes()));
  nodes[static_cast<std::size_t>(rt.pe())] = rt.node();
  rt.bootstrap().allgather(nodes.data(), sizeof(int));
  std::vector<int> pes;
  for (int p = 0; p < rt.n_pes(); ++p) {
    if (nodes[static_cast<std::size_t>(p)] == rt.node()) pes.push_back(p);
  }
  const int stride = pes.size() > 1 ? pes[1] - pes[0] : 1;
  for (std::size_t i = 1; i < pes.size(); ++i) {
    if (pes[i] - pes[i - 1] != stride) {
      fail(rt.pe(), "team_node",
           "the PEs of node " + std::to_string(rt.node()) + " are not evenly spaced (PEs " +
               std::to_string(pes[i - 1]) + " and " + std::to_string(pes[i]) + " after stride " +
               std::to_string(stride) + "), so they do not form a strided team");
    }
  }
  return with_workspace(rt, strided(rt.pe(), pes.front(), stride, static_cast<int>(pes.size())));
}

Team team_split_strided(Runtime& rt, const Team& parent, int start, int stride, int size) {
  // (The call's description must fit the check's 63 characters.)
  const std::string call = "team_split_strided(" + std::to_string(start) + ", " +
                           std::to_string(stride) + ", " + std::to_string(size) + ") of (" +
                           std::to_string(parent.start) + ", " + std::to_string(parent.stride) +
                           ", " + std::to_string(parent.size) + ")";
  detail::check_op_call(rt, call, "team_split_strided");
  if (size < 1 || start < 0 || stride < 1 ||
      static_cast<long>(start) + static_cast<long>(size - 1) * stride >= parent.size) {
    fail(rt.pe(), "team_split_strided",
         "ranks start " + std::to_string(start) + ", stride " + std::to_string(stride) + ", size " +
             std::to_string(size) + " must be >= 0, >= 1, >= 1 and lie inside the " +
             "parent team " + describe(parent));
  }
  return with_workspace(rt, strided(rt.pe(), parent.pe(start), parent.stride * stride, size));
}

std::size_t team_workspace_size(const Runtime& rt) {
  return ops::support::team_workspace_bytes(rt.n_pes()) +
         device::TeamBarrierWords::bytes_for(rt.n_pes());
}

Team team_over_block(Runtime& rt, int start, int stride, int size, void* block, std::size_t bytes) {
  const int pe = rt.pe();
  if (size < 1 || start < 0 || stride < 1 ||
      static_cast<long>(start) + static_cast<long>(size - 1) * stride >= rt.n_pes()) {
    fail(pe, "team_over_block",
         "PEs start " + std::to_string(start) + ", stride " + std::to_string(stride) + ", size " +
             std::to_string(size) + " must be >= 0, >= 1, >= 1 and lie inside the job's " +
             std::to_string(rt.n_pes()) + " PEs");
  }
  Team team = strided(pe, start, stride, size);
  if (!team.is_member()) {
    fail(pe, "team_over_block", "this PE is not one of the members " + describe(team));
  }
  const std::size_t need = team_workspace_size(rt);
  if (block == nullptr || bytes < need || !rt.in_heap(block, need) ||
      reinterpret_cast<std::uintptr_t>(block) % 64 != 0) {
    fail(pe, "team_over_block",
         "the block must be " + std::to_string(need) +
             " bytes of the symmetric heap, 64-byte aligned (got " + std::to_string(bytes) +
             " bytes" + (block != nullptr && rt.in_heap(block, 1) ? "" : ", not in the heap") +
             ")");
  }
  team.workspace = block;
  team.workspace_bytes = need;
  detail::zero_heap(rt, block, need);
  ops::support::team_epochs(rt).forget(block);
  return team;
}

}  // namespace tessera
