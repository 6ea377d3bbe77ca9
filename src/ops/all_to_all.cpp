// Host launchers of all_to_all and all_to_all_v: argument checks, then the one-block kernel that
// runs the device building block on the stream (after the first-call agreement check where the
// team needs it: ops/collective_support.hpp).
#include "tessera/ops/all_to_all.hpp"

#include <cstdint>
#include <string>

#include "ops/collective_support.hpp"

namespace tessera::ops {
namespace {

namespace td = tessera::device;
using support::fail;

// The exchange only moves elements, so there is one kernel per element size (W is the unsigned
// word of that size), chosen on the host by support::launch_per_dtype: small kernels build several
// times faster than one switching over every type.
template <class W>
struct AllToAllKernel {
  TESSERA_KERNEL_CODE void operator()(td::Block blk, td::Context ctx, td::Team team,
                                      td::ops::AllReduceWorkspace ws, W* recv, const W* send,
                                      std::size_t count, support::CallEpochs epochs,
                                      support::CallDescriptor call,
                                      support::Agreement check) const {
    const std::uint64_t first_epoch = epochs.first(blk);
    if (!support::call_agreed(blk, ctx, team, call, check, first_epoch, "all_to_all")) return;
    td::ops::all_to_all(blk, ctx, team, ws, recv, send, count, first_epoch);
  }
};

template <class W>
struct AllToAllVKernel {
  TESSERA_KERNEL_CODE void operator()(td::Block blk, td::Context ctx, td::Team team,
                                      td::ops::AllReduceWorkspace ws, W* recv,
                                      std::size_t recv_capacity, const W* send,
                                      const std::size_t* send_counts, std::size_t* recv_counts,
                                      std::size_t* recv_offsets, support::CallEpochs epochs,
                                      support::CallDescriptor call,
                                      support::Agreement check) const {
    const std::uint64_t first_epoch = epochs.first(blk);
    if (!support::call_agreed(blk, ctx, team, call, check, first_epoch, "all_to_all_v")) return;
    td::ops::all_to_all_v(blk, ctx, team, ws, recv, recv_capacity, send, send_counts, recv_counts,
                          recv_offsets, first_epoch + 1);
  }
};

}  // namespace

void all_to_all(Runtime& rt, Stream& stream, const Team& team, const void* send, void* recv,
                std::size_t count, Dtype dtype) {
  const int pe = rt.pe();
  const char* what = "all_to_all";
  support::check_team(rt, team, what);
  if (count == 0) fail(pe, what, "count must be at least 1, got 0");
  if (send == nullptr) fail(pe, what, "send is null");
  const auto m = static_cast<std::size_t>(team.size);
  support::check_heap_buffer(rt, recv, m * count, "team.size * count", dtype, what, "recv");
  const std::size_t bytes = m * count * size_of(dtype);
  if (send != recv && support::overlap(send, bytes, recv, bytes)) {
    fail(pe, what, "recv partly overlaps send: they must be equal (in place) or disjoint");
  }
  std::uint64_t segments = 0;
  support::with_dtype_on_host(dtype, [&](auto tag) {
    segments = td::ops::all_to_all_segments<typename decltype(tag)::type>(count, team.size);
  });
  const support::CallDescriptor call = support::make_call(
      support::CollectiveKind::all_to_all, count, dtype, ReduceOp::sum, 0, rt.heap_offset(recv));
  support::launch_team_collective<AllToAllKernel, support::DtypeSplit::word>(
      rt, stream, team, call, what, segments, dtype, recv, send, count);
}

void all_to_all_v(Runtime& rt, Stream& stream, const Team& team, const void* send,
                  const std::size_t* send_counts, void* recv, std::size_t recv_capacity,
                  std::size_t* recv_counts, std::size_t* recv_offsets, Dtype dtype) {
  const int pe = rt.pe();
  const char* what = "all_to_all_v";
  support::check_team(rt, team, what);
  const auto ws = td::ops::AllReduceWorkspace::from(team.workspace, team.size);
  const int max_team = td::ops::all_to_all_v_max_team(ws.half_bytes);
  if (team.size > max_team) {
    fail(pe, what,
         support::describe(team) + " has more than " + std::to_string(max_team) +
             " members, whose count matrix does not fit the team's staging");
  }
  if (send == nullptr) fail(pe, what, "send is null");
  if (send_counts == nullptr) fail(pe, what, "send_counts is null");
  if (recv_counts == nullptr) fail(pe, what, "recv_counts is null");
  if (recv_offsets == nullptr) fail(pe, what, "recv_offsets is null");
  support::check_heap_buffer(rt, recv, recv_capacity, "recv_capacity", dtype, what, "recv");
  // The sender's counts are read on the stream, so send's extent is unknown here; a recv that
  // starts inside send's first element is the one overlap that can be told now.
  if (support::overlap(send, size_of(dtype), recv, recv_capacity * size_of(dtype))) {
    fail(pe, what, "recv overlaps send: all_to_all_v is out of place only");
  }
  const support::CallDescriptor call = support::make_call(
      support::CollectiveKind::all_to_all_v, 0, dtype, ReduceOp::sum, 0, rt.heap_offset(recv));
  support::launch_team_collective<AllToAllVKernel, support::DtypeSplit::word>(
      rt, stream, team, call, what, 1, dtype, recv, recv_capacity, send, send_counts, recv_counts,
      recv_offsets);
}

}  // namespace tessera::ops
