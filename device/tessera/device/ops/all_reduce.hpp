// All-reduce building blocks on a Team: every member contributes `count` elements and every
// member ends with their element-wise reduction (sum, max, min, prod) in `out`. Called by exactly
// one group per member PE (the Block of a one-block kernel, or one block of a larger kernel);
// every member makes the same sequence of calls on the same team with the same count, element
// type and op. `in` is local memory of any kind and may equal `out` (in place); `out` is
// symmetric (the same heap offset on every member) for two_shot, ring and atomic, which write
// into peers' `out`. Every member must be load/store reachable (mapped) from every other.
//
// Staging and signals live in the team's workspace (AllReduceWorkspace). A call runs in
// segments of at most AllReduceWorkspace::segment_elems elements, and segment s of a call uses
// epoch first_epoch + s + 1: pass first_epoch = the number of segments all earlier calls on this
// team used (all_reduce_segments), so nothing is reset between calls. Calls may switch algorithm
// from one call to the next (all members alike).
//
// 16-bit types (half, bf16) are reduced in fp32 and rounded once, at the end; fp32 in fp32;
// int32/int64 in their own type (wrapping). one_shot, two_shot and ring combine the members'
// contributions in one fixed order, so every member gets bit-identical results; atomic adds in
// arrival order (fp32 results may then differ in the last bits between members).
//
// What becomes visible when (every algorithm):
//  - on return, this PE's `out` holds the reduction of call n, and `in` is reusable;
//  - no member writes into this PE's `out` or reads its staging for call n + 1 before this PE
//    has entered call n + 1, so `out` may be read freely between calls.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "tessera/device/context.hpp"
#include "tessera/device/group.hpp"
#include "tessera/device/numeric.hpp"
#include "tessera/device/team.hpp"

namespace tessera::device::ops {

// The element-wise reduction. prod is for integer types only (the host call rejects it for
// floating types, whose products over- and underflow too easily to be a collective's job).
enum class ReduceOp : std::uint8_t { sum, max, min, prod };

// The element types all_reduce reduces, and the type it accumulates each in.
template <class T>
inline constexpr bool is_all_reduce_type_v =
    std::is_same_v<T, float> || std::is_same_v<T, half> || std::is_same_v<T, bf16> ||
    std::is_same_v<T, std::int32_t> || std::is_same_v<T, std::int64_t>;
template <class T>
using AllReduceAcc =
    std::conditional_t<std::is_same_v<T, half> || std::is_same_v<T, bf16>, float, T>;

// The all-reduce view of a team's workspace: signal words, then two staging halves used by
// alternate epochs. Zero before a team's first collective; never reset.
struct AllReduceWorkspace {
  // arrived[r] on PE p: the last epoch whose staging member r has filled (set by r).
  std::uint64_t* arrived = nullptr;
  // done[r] on PE p: the last epoch in which member r finished with p's data (set by r).
  std::uint64_t* done = nullptr;
  // The ring's counters, written by the left neighbour only: reduce-scatter and all-gather steps.
  std::uint64_t* ring_rs = nullptr;
  std::uint64_t* ring_ag = nullptr;
  unsigned char* staging = nullptr;  // 2 halves of half_bytes each
  std::size_t half_bytes = 0;

  // Bytes of staging per segment the accumulator type is counted in (the ring stages
  // accumulators); a half holds kSegmentBytes plus the ring's rounding slack.
  static constexpr std::size_t kSegmentBytes = std::size_t{1} << 20;

  // Elements of T one segment carries.
  template <class T>
  TESSERA_HOST_DEVICE static constexpr std::size_t segment_elems() {
    return kSegmentBytes / sizeof(AllReduceAcc<T>);
  }

  // Bytes of workspace a team of `team_size` members needs.
  TESSERA_HOST_DEVICE static constexpr std::size_t bytes_for(int team_size) {
    return words_bytes(team_size) + 2 * half_bytes_for(team_size);
  }

  // The view of `workspace` (bytes_for(team_size) symmetric bytes, 64-byte aligned).
  TESSERA_HOST_DEVICE static AllReduceWorkspace from(void* workspace, int team_size) {
    auto* words = static_cast<std::uint64_t*>(workspace);
    const auto m = static_cast<std::size_t>(team_size);
    AllReduceWorkspace ws;
    ws.arrived = words;
    ws.done = words + m;
    ws.ring_rs = words + 2 * m;
    ws.ring_ag = words + 2 * m + 8;  // its own cache line
    ws.staging = static_cast<unsigned char*>(workspace) + words_bytes(team_size);
    ws.half_bytes = half_bytes_for(team_size);
    return ws;
  }

  // The staging half epoch `epoch` uses.
  TESSERA_HOST_DEVICE unsigned char* half(std::uint64_t epoch) const {
    return staging + (epoch % 2) * half_bytes;
  }

 private:
  TESSERA_HOST_DEVICE static constexpr std::size_t words_bytes(int team_size) {
    return ((2 * static_cast<std::size_t>(team_size) + 16) * sizeof(std::uint64_t) + 63) / 64 * 64;
  }
  // The ring's m - 1 slots of ceil(L / m) accumulators exceed L by less than m accumulators.
  TESSERA_HOST_DEVICE static constexpr std::size_t half_bytes_for(int team_size) {
    return kSegmentBytes + (static_cast<std::size_t>(team_size) * 8 + 63) / 64 * 64;
  }
};

static_assert(std::is_trivially_copyable_v<AllReduceWorkspace>, "passed to kernels by value");

// Segments (hence epochs) one call of `count` elements of T uses.
template <class T>
TESSERA_HOST_DEVICE constexpr std::uint64_t all_reduce_segments(std::size_t count) {
  const std::size_t seg = AllReduceWorkspace::segment_elems<T>();
  return count == 0 ? 0 : (count + seg - 1) / seg;
}

// One-shot: each member copies its segment into its staging, tells every member, then reads all
// members' staging through pointer translation and reduces it into its own `out`. One hop;
// each PE reads (m - 1) * count elements from peers. Best for small messages.
template <class T, class G>
TESSERA_KERNEL_CODE void all_reduce_one_shot(G g, const Context& ctx, const Team& team,
                                             AllReduceWorkspace ws, T* out, const T* in,
                                             std::size_t count, ReduceOp op,
                                             std::uint64_t first_epoch);

// Two-shot: reduce-scatter (member r reduces chunk r of every member's staging), then
// all-gather (r writes its reduced chunk into every member's `out`, with a signal). Each PE reads
// and writes about 2 * count * (m - 1) / m elements: less traffic than one-shot for large ones.
template <class T, class G>
TESSERA_KERNEL_CODE void all_reduce_two_shot(G g, const Context& ctx, const Team& team,
                                             AllReduceWorkspace ws, T* out, const T* in,
                                             std::size_t count, ReduceOp op,
                                             std::uint64_t first_epoch);

// Ring: reduce-scatter around the ring (each step adds this member's chunk to the partial sum
// from the left and writes it into the right neighbour's staging), then all-gather around the
// ring into `out`. Each PE only writes to its right neighbour: 2 * (m - 1) steps of count / m.
template <class T, class G>
TESSERA_KERNEL_CODE void all_reduce_ring(G g, const Context& ctx, const Team& team,
                                         AllReduceWorkspace ws, T* out, const T* in,
                                         std::size_t count, ReduceOp op, std::uint64_t first_epoch);

// Atomic: each member starts `out` from its own contribution, then atomically adds its
// contribution into every peer's `out`. Sum only, for int32, int64 and (where
// platform::kFloatAtomicAdd) fp32.
template <class T, class G>
TESSERA_KERNEL_CODE void all_reduce_atomic(G g, const Context& ctx, const Team& team,
                                           AllReduceWorkspace ws, T* out, const T* in,
                                           std::size_t count, std::uint64_t first_epoch);

}  // namespace tessera::device::ops

#include "tessera/device/ops/impl/all_reduce_funcs.hpp"
