// Host launcher of the broadcast: argument checks, then the one-block kernel that runs the device
// building block on the stream (after the first-call agreement check where the team needs it:
// ops/collective_support.hpp).
#include "tessera/ops/broadcast.hpp"

#include <cstdint>
#include <string>

#include "ops/collective_support.hpp"

namespace tessera::ops {
namespace {

namespace td = tessera::device;
using support::fail;

constexpr const char* kWhat = "broadcast";

// Broadcast only moves elements: one kernel per element size (W, the unsigned word of that
// size), chosen on the host by support::launch_per_dtype.
template <class W>
struct BroadcastKernel {
  TESSERA_KERNEL_CODE void operator()(td::Block blk, td::Context ctx, td::Team team,
                                      td::ops::AllReduceWorkspace ws, W* recv, const W* send,
                                      std::size_t count, int root, support::CallEpochs epochs,
                                      support::CallDescriptor call,
                                      support::Agreement check) const {
    const std::uint64_t first_epoch = epochs.first(blk);
    if (!support::call_agreed(blk, ctx, team, call, check, first_epoch, kWhat)) return;
    td::ops::broadcast(blk, ctx, team, ws, recv, send, count, root, first_epoch);
  }
};

}  // namespace

void broadcast(Runtime& rt, Stream& stream, const Team& team, const void* send, void* recv,
               std::size_t count, Dtype dtype, int root) {
  const int pe = rt.pe();
  support::check_team(rt, team, kWhat);
  if (count == 0) fail(pe, kWhat, "count must be at least 1, got 0");
  if (root < 0 || root >= team.size) {
    fail(pe, kWhat,
         "root " + std::to_string(root) + " is not a rank of " + support::describe(team) +
             ": expected 0 .. " + std::to_string(team.size - 1));
  }
  const bool is_root = team.my_rank == root;
  if (is_root && send == nullptr) fail(pe, kWhat, "send is null on the root");
  support::check_heap_buffer(rt, recv, count, "count", dtype, kWhat, "recv");
  const std::size_t bytes = count * size_of(dtype);
  if (is_root && send != recv && support::overlap(send, bytes, recv, bytes)) {
    fail(pe, kWhat, "recv partly overlaps send on the root: they must be equal or disjoint");
  }
  std::uint64_t chunks = 0;
  support::with_word_of(dtype, [&](auto tag) {
    chunks = td::ops::broadcast_segments<typename decltype(tag)::type>(count);
  });
  const support::CallDescriptor call =
      support::make_call(support::CollectiveKind::broadcast, count, dtype, ReduceOp::sum,
                         static_cast<std::uint64_t>(root), rt.heap_offset(recv));
  support::launch_team_collective<BroadcastKernel, support::DtypeSplit::word>(
      rt, stream, team, call, kWhat, chunks, dtype, recv, is_root ? send : nullptr, count, root);
}

}  // namespace tessera::ops
