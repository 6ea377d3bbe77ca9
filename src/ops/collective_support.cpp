#include "ops/collective_support.hpp"

#include "runtime/op_support.hpp"

namespace tessera::ops::support {

bool TeamEpochs::first_call(const void* workspace, const CallDescriptor& c, bool record) {
  std::lock_guard lock(mu_);
  const Key key{workspace, c.kind, c.count, c.dtype, c.op, c.variant, c.recv_offset};
  return record ? seen_.insert(key).second : !seen_.contains(key);
}

std::uint64_t TeamEpochs::next_check(const void* workspace) {
  std::lock_guard lock(mu_);
  return checks_[workspace]++;
}

void TeamEpochs::forget(const void* workspace) {
  std::lock_guard lock(mu_);
  checks_.erase(workspace);
  std::erase_if(seen_, [&](const Key& k) { return std::get<0>(k) == workspace; });
}

TeamEpochs& team_epochs(Runtime& rt) { return tessera::detail::op_cache(rt).get<TeamEpochs>(); }

Agreement agree(Runtime& rt, const Stream& stream, const Team& team, const CallDescriptor& call,
                const char* what) {
  Agreement result;
  const bool host_check = team.size == rt.n_pes();
  if (host_check && stream.capturing() && team_epochs(rt).first_call(team.workspace, call, false)) {
    tessera::detail::refuse_capture(
        stream, what,
        "is the first of its kind on its team (these arguments, this recv), so every PE checks "
        "that the others make the same call, collectively");
  }
  if (!team_epochs(rt).first_call(team.workspace, call)) return result;
  if (host_check) {
    // Every PE must be making this very call (and not another collective): the message names
    // each PE's call when they differ.
    device::detail::Message text;
    describe_call(text, call);
    tessera::detail::check_op_call(rt, text.c_str(), what);
  } else {
    // The PEs outside the team make no matching call, so the members compare on the stream.
    result.check_on_stream = true;
    result.check = team_epochs(rt).next_check(team.workspace);
  }
  return result;
}

void fail(int pe, const char* what, const std::string& message) {
  throw Error(ErrorCode::invalid_argument, pe, std::string(what) + ": " + message);
}

std::string describe(const Team& t) {
  return "team (start " + std::to_string(t.start) + ", stride " + std::to_string(t.stride) +
         ", size " + std::to_string(t.size) + ")";
}

void check_team(Runtime& rt, const Team& team, const char* what) {
  const int pe = rt.pe();
  if (!team.is_member()) fail(pe, what, "this PE is not a member of " + describe(team));
  if (team.workspace == nullptr || !rt.in_heap(team.workspace, team.workspace_bytes) ||
      team.workspace_bytes < team_workspace_bytes(team.size)) {
    fail(pe, what,
         describe(team) +
             " has no workspace: make it with team_world, team_node or team_split_strided");
  }
  for (int i = 0; i < team.size; ++i) {
    const Transport t = rt.transport(team.pe(i));
    if (t != Transport::self && t != Transport::mapped) {
      fail(pe, what,
           "member PE " + std::to_string(team.pe(i)) + " is reached through " + to_string(t) +
               ", but " + what + " reads and writes members' heaps directly (load/store): " +
               "every member must be mapped (same node, TESSERA_P2P=1)");
    }
  }
}

void check_heap_buffer(Runtime& rt, const void* p, std::size_t elems, const char* elems_name,
                       Dtype dtype, const char* what, const char* name) {
  const int pe = rt.pe();
  if (p == nullptr || !rt.in_heap(p)) {
    fail(pe, what,
         std::string(name) +
             " must point into the symmetric heap (allocate it with Runtime::malloc/alloc)");
  }
  const std::size_t left = tessera::detail::bytes_left_in_block(rt, p);
  if (left == 0) {
    fail(pe, what, std::string(name) + " is not inside a live symmetric heap block (freed?)");
  }
  if (elems > left / size_of(dtype)) {
    fail(pe, what,
         std::string(name) + " too small: needs " + elems_name + " * " +
             std::to_string(size_of(dtype)) + " = " + std::to_string(elems * size_of(dtype)) +
             " bytes, the heap block holds " + std::to_string(left) + " bytes from " + name);
  }
}

void check_reduce_op(int pe, Dtype dtype, ReduceOp op, const char* what) {
  const bool floating = dtype == Dtype::f32 || dtype == Dtype::bf16 || dtype == Dtype::f16;
  if (op == ReduceOp::prod && floating) {
    fail(pe, what,
         std::string("op prod is for integer dtypes (i32, i64), got ") + to_string(dtype));
  }
}

bool overlap(const void* a, std::size_t a_bytes, const void* b, std::size_t b_bytes) {
  const auto x = reinterpret_cast<std::uintptr_t>(a), y = reinterpret_cast<std::uintptr_t>(b);
  return x < y + b_bytes && y < x + a_bytes;
}

CallDescriptor make_call(CollectiveKind kind, std::size_t count, Dtype dtype, ReduceOp op,
                         std::uint64_t variant, std::size_t recv_offset) {
  CallDescriptor c;
  c.kind = static_cast<std::uint64_t>(kind);
  c.count = count;
  c.dtype = static_cast<std::uint64_t>(dtype);
  c.op = static_cast<std::uint64_t>(op);
  c.variant = variant;
  c.recv_offset = recv_offset;
  return c;
}

}  // namespace tessera::ops::support
