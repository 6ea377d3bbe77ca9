// The overlap taxonomy on the device (host side: <tessera/ops/overlap.hpp>): the roles a
// tile-pipelined fused op's groups play, one schedule for every op. An op is a plain struct (its
// Args: GemmArArgs, GemmAsArgs) that says, per call,
//   items(ctx)           how many tiles this PE computes, in the order it computes them;
//   tile(ctx, i)         the i-th of them (kNoTile for an empty one, skipped);
//   compute(g, ctx, t)   computes tile t into the op's symmetric staging (nothing visible yet);
//   publish(g, ctx, t)   hands tile t on (push: put into a peer's heap with a signal; pull: a
//                        signal saying where it can be read);
//   finish_items(ctx)    how many receiving steps this PE has;
//   finish(g, ctx, j)    receiving step j: waits for what it needs and writes the result;
// and carries OverlapWords. The patterns are then:
//   workgroup_specialized  overlap_communicate on comm groups, overlap_compute on the others;
//   producer_consumer      the same two roles as two kernels on two streams;
//   fused_sequential       overlap_fused on every group.
// A compute group hands tile t to the communicating groups of its PE by setting the local word
// ready[t] to the call's epoch with release; they acquire it before publishing.
//
// Reuse across calls (epochs, never reset, no barrier between calls): every group first waits
// until every PE has finished call e - 1 (consumed[p] >= e - 1 for all p), so nothing a peer
// still reads or writes for call e - 1 is touched; when all `groups` groups of a PE have
// finished call e, the last sets consumed[me] = e on every PE (detail::finish_reading).
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "tessera/device/context.hpp"
#include "tessera/device/group.hpp"
#include "tessera/device/tile.hpp"

namespace tessera::device::ops {

// Declares an op's three steps of the Op interface above in its struct, so their signatures are
// written once: compute(g, ctx, t), publish(g, ctx, t) and finish(g, ctx, j), each a const
// member template on the group type G; the op defines them in its impl header.
#define TESSERA_OVERLAP_OP_STEPS                                                  \
  template <class G>                                                              \
  TESSERA_KERNEL_CODE void compute(G g, const Context& ctx, std::size_t t) const; \
  template <class G>                                                              \
  TESSERA_KERNEL_CODE void publish(G g, const Context& ctx, std::size_t t) const; \
  template <class G>                                                              \
  TESSERA_KERNEL_CODE void finish(G g, const Context& ctx, std::size_t j) const

// tile(ctx, i) of a tile that is empty on this shape (a short last shard).
inline constexpr std::size_t kNoTile = ~std::size_t{0};

// Tile t, in row-major order, of a rows x cols matrix cut into tile_m x tile_n tiles: its first
// row and column and its size (short at the bottom and right edges).
struct GridTile {
  std::size_t r0, c0, rows, cols;
};
TESSERA_HOST_DEVICE inline GridTile grid_tile(std::size_t t, std::size_t rows, std::size_t cols,
                                              std::size_t tile_m, std::size_t tile_n) {
  const std::size_t tiles_n = (cols + tile_n - 1) / tile_n;
  const std::size_t r0 = (t / tiles_n) * tile_m, c0 = (t % tiles_n) * tile_n;
  return GridTile{r0, c0, rows - r0 < tile_m ? rows - r0 : tile_m,
                  cols - c0 < tile_n ? cols - c0 : tile_n};
}

// The handshake words of one pipelined op, the same layout on every PE.
struct OverlapWords {
  std::uint64_t* ready = nullptr;         // this PE's, one per tile: computed in call `epoch`
  std::uint64_t* consumed = nullptr;      // symmetric, n_pes words (the reuse handshake)
  std::uint64_t* readers_done = nullptr;  // symmetric, 1 word: groups finished, all calls
  int groups = 1;                         // groups of this PE taking part in a call (every role)
  // The call's number: 1 for the first call, then 2, 3, ... Set it inside the kernel from a
  // device::DeviceEpoch (DeviceEpoch::next_in_grid) when the launch may be captured into a Graph
  // and replayed: an epoch passed from the host is frozen at capture (docs/graphs.md). The
  // library's launchers do so.
  std::uint64_t epoch = 0;
  std::uint32_t comm_delay_us = 0;  // test hook: delay before each tile is published
};

static_assert(std::is_trivially_copyable_v<OverlapWords>, "passed to kernels by value");

// The compute role (group `rank` of `count` compute groups): computes items rank, rank + count,
// ... and marks each ready; never waits for a peer except the reuse handshake.
template <class G, class Op>
TESSERA_KERNEL_CODE void overlap_compute(G g, const Context& ctx, const Op& op, int rank,
                                         int count);

// The communication role (group `rank` of `count`): publishes items rank, rank + count, ... as
// they become ready, then runs receiving steps rank, rank + count, ... Returns when its puts are
// complete.
template <class G, class Op>
TESSERA_KERNEL_CODE void overlap_communicate(G g, const Context& ctx, const Op& op, int rank,
                                             int count);

// Both in one group (fused_sequential, group `rank` of `count`): computes and at once publishes
// each of its items, then runs its receiving steps.
template <class G, class Op>
TESSERA_KERNEL_CODE void overlap_fused(G g, const Context& ctx, const Op& op, int rank, int count);

// One kernel of the workgroup-specialised pattern: blocks [0, comm_blocks) communicate, the
// others compute (op.words.groups = the grid).
template <class Op>
TESSERA_KERNEL_CODE void overlap_specialized(Block blk, const Context& ctx, const Op& op,
                                             int comm_blocks);

// The bulk-synchronous GEMM (group `rank` of `count`): C = A x B tile by tile (tile_m x tile_n
// tiles, items rank, rank + count, ...), nothing published; the collective follows as its own
// kernel.
template <class G, class TA, class TB>
TESSERA_KERNEL_CODE void gemm_tiles(G g, Tile<float> c, Tile<const TA> a, Tile<const TB> b,
                                    std::size_t tile_m, std::size_t tile_n, int rank, int count);

}  // namespace tessera::device::ops

#include "tessera/device/ops/impl/overlap_funcs.hpp"
