// All-to-all building blocks on a Team: member r's block j (of `in`, packed in rank order) lands
// in member j's `out` as block r. Called by exactly one group per member PE, every member making
// the same sequence of calls on the team; `out` is symmetric (the same heap offset on every
// member: peers write into it), `in` is local memory of any kind. Every member must be load/store
// reachable (mapped) from every other.
//
// Signals (arrived, done) and, for in-place calls, staging are the team's AllReduceWorkspace;
// epochs as in <tessera/device/ops/all_reduce.hpp>: pass first_epoch = the epochs all earlier
// calls on the team used, whatever the op.
//
// What becomes visible when:
//  - no member writes into this member's `out` for a call before this member has entered it
//    (all_to_all: before it has staged the part of `in` it overwrites, in place), so `out` may be
//    read freely between calls;
//  - on return `out` holds every member's block for this member (all_to_all_v: also the counts
//    and offsets) and `in` is reusable.
#pragma once

#include <cstddef>
#include <cstdint>

#include "tessera/device/context.hpp"
#include "tessera/device/ops/all_reduce.hpp"
#include "tessera/device/team.hpp"

namespace tessera::device::ops {

// Elements of each block one all_to_all segment carries on a team of `team_size` (a segment of
// every block fills at most one staging half).
template <class T>
TESSERA_HOST_DEVICE constexpr std::size_t all_to_all_segment_elems(int team_size) {
  return AllReduceWorkspace::kSegmentBytes /
         (static_cast<std::size_t>(team_size < 1 ? 1 : team_size) * sizeof(T));
}

// Segments (hence epochs) one all_to_all of `count` elements per block uses.
template <class T>
TESSERA_HOST_DEVICE constexpr std::uint64_t all_to_all_segments(std::size_t count, int team_size) {
  const std::size_t seg = all_to_all_segment_elems<T>(team_size);
  return count == 0 ? 0 : (count + seg - 1) / seg;
}

// Equal counts: `in` holds team.size blocks of `count` elements; `out` (symmetric) receives
// team.size blocks of `count`. Push: each member writes its block j straight into member j's
// `out` (one copy, (m - 1) * count elements written remotely) once j has entered the call. In
// place (in == out on this member; members may differ) this member first stages each segment of
// its blocks, and peers write a segment only after it is staged.
template <class T, class G>
TESSERA_KERNEL_CODE void all_to_all(G g, const Context& ctx, const Team& team,
                                    AllReduceWorkspace ws, T* out, const T* in, std::size_t count,
                                    std::uint64_t first_epoch);

// The largest team all_to_all_v exchanges its counts for: team.size rows of team.size + 1 words
// fill at most one staging half.
TESSERA_HOST_DEVICE constexpr int all_to_all_v_max_team(std::size_t half_bytes) {
  int m = 1;
  while (static_cast<std::size_t>(m + 1) * static_cast<std::size_t>(m + 2) * 8 <= half_bytes) ++m;
  return m;
}

// Counts per peer, one epoch per call: send_counts[j] (team.size entries, this PE's memory) of
// `in` (packed in rank order) go to member j. Every member first sends every other member its
// counts and its out_capacity (elements), so each member knows the whole count matrix: blocks
// land in `out` packed in source-rank order, and recv_counts[s] / recv_offsets[s] (this PE's
// memory, team.size entries each) say where member s's block is. When the blocks for any member
// exceed its capacity, every member reports the same failure (invalid_argument, naming that
// member, its capacity and the count from each sender) and nothing is written into any `out`.
// `in` and `out` must not overlap.
template <class T, class G>
TESSERA_KERNEL_CODE void all_to_all_v(G g, const Context& ctx, const Team& team,
                                      AllReduceWorkspace ws, T* out, std::size_t out_capacity,
                                      const T* in, const std::size_t* send_counts,
                                      std::size_t* recv_counts, std::size_t* recv_offsets,
                                      std::uint64_t epoch);

}  // namespace tessera::device::ops

#include "tessera/device/ops/impl/all_to_all_funcs.hpp"
