// Reduce-scatter building blocks on a Team: every member contributes team.size blocks of `count`
// elements (block r for member r, packed in rank order in `in`) and member r ends with the
// element-wise reduction (sum, max, min, prod) of every member's block r in `out` (count
// elements). Called by exactly one group per member PE, every member making the same sequence of
// calls on the team with the same count, element type and op. `in` is local memory of any kind;
// `out` is this member's own (it is written only by this member) and may be in place
// (out == in + my_rank * count). Every member must be load/store reachable (mapped) from every
// other.
//
// Staging and signals are the team's AllReduceWorkspace; a call runs in segments of at most
// reduce_scatter_segment_elems elements of each block, and segment s uses epoch
// first_epoch + s + 1 (pass the epochs all earlier calls on the team used, whatever the op:
// reduce_scatter_segments, all_reduce_segments, ...). Nothing is reset between calls.
//
// 16-bit types are reduced in fp32 and rounded once; fp32 in fp32; int32/int64 in their own
// type (wrapping). What becomes visible when: on return `out` holds the reduction and `in` is
// reusable; no member reads this member's staging for call n + 1 before it has entered that call.
#pragma once

#include <cstddef>
#include <cstdint>

#include "tessera/device/context.hpp"
#include "tessera/device/ops/all_reduce.hpp"
#include "tessera/device/team.hpp"

namespace tessera::device::ops {

// Elements of each block one segment carries on a team of `team_size` (the segment's blocks, in
// accumulators, fill one staging half).
template <class T>
TESSERA_HOST_DEVICE constexpr std::size_t reduce_scatter_segment_elems(int team_size) {
  return AllReduceWorkspace::kSegmentBytes /
         (static_cast<std::size_t>(team_size < 1 ? 1 : team_size) * sizeof(AllReduceAcc<T>));
}

// Segments (hence epochs) one call of `count` elements per block uses.
template <class T>
TESSERA_HOST_DEVICE constexpr std::uint64_t reduce_scatter_segments(std::size_t count,
                                                                    int team_size) {
  const std::size_t seg = reduce_scatter_segment_elems<T>(team_size);
  return count == 0 ? 0 : (count + seg - 1) / seg;
}

// One-shot: each member stages its segment of every block, tells every member, then reads its own
// block from every member's staging and reduces it into `out`. One hop; each PE reads
// (m - 1) * count elements from peers. Best for small messages.
template <class T, class G>
TESSERA_KERNEL_CODE void reduce_scatter_one_shot(G g, const Context& ctx, const Team& team,
                                                 AllReduceWorkspace ws, T* out, const T* in,
                                                 std::size_t count, ReduceOp op,
                                                 std::uint64_t first_epoch);

// Ring: block c starts at member c + 1 and moves right m - 1 times, each member adding its own
// contribution (partial sums are accumulators written into the right neighbour's staging); member
// c adds the last one. Each PE only writes to its right neighbour: (m - 1) * count elements.
template <class T, class G>
TESSERA_KERNEL_CODE void reduce_scatter_ring(G g, const Context& ctx, const Team& team,
                                             AllReduceWorkspace ws, T* out, const T* in,
                                             std::size_t count, ReduceOp op,
                                             std::uint64_t first_epoch);

}  // namespace tessera::device::ops

#include "tessera/device/ops/impl/reduce_scatter_funcs.hpp"
