// gemm_ar building blocks (device side of tessera::ops::GemmAr, host header
// <tessera/ops/gemm_ar.hpp>; GemmRs's non-default patterns use them too): C = the sum over PEs of
// A_local x B_local, tile by tile, with the reduction owned by rows. The rows of C are cut into
// n_pes shards of shard_rows (the last ones may be short or empty); PE o owns shard o and its
// per_shard() tiles. For each tile:
//   compute  every PE computes its partial into its `partial` (symmetric m x n);
//   publish  a PE hands its partial of a tile to the tile's owner: push puts it into the owner's
//            slot for this PE and sets part_flags[me][tile] there; pull only sets the flag, and
//            the owner reads the partial in place;
//   reduce   the owner adds the n_pes partials in fp32 (its own first, then me - 1, me - 2, ...:
//            one order, so every PE receives identical bits) into `reduced` (all_rows) or
//            straight into its rows of c (!all_rows: gemm_rs);
//   collect  (all_rows only) every PE receives each sum: push: the owner puts it into every PE's
//            `reduced` and sets sum_flags[tile] there; pull: the owner sets the flag and every PE
//            reads the owner's `reduced` in place; then copied into c.
// The roles (overlap.hpp) schedule these: compute = compute; publish = publish; the receiving
// steps are this PE's reduces, then its collects. Items run in destination order, the shard of
// my_pe + 1 first and my own last, so the owner's own partials come when peers' have arrived.
#pragma once

#include <cstddef>
#include <cstdint>

#include "tessera/device/context.hpp"
#include "tessera/device/group.hpp"
#include "tessera/device/ops/gemm_tile.hpp"
#include "tessera/device/ops/overlap.hpp"
#include "tessera/device/tile.hpp"

namespace tessera::device::ops {

// A tile of the row-sharded grid: rows [r0, r0 + rows) x cols [c0, c0 + cols) of C, owned by
// `owner`, the `index`-th tile of its shard.
struct ShardTile {
  std::size_t r0 = 0, rows = 0, c0 = 0, cols = 0;
  int owner = 0;
  std::size_t index = 0;
};

template <class TA, class TB>
struct GemmArArgs {
  Tile<const TA> a;          // m x k_local
  Tile<const TB> b;          // k_local x n
  Tile<float> c;             // all_rows: m x n; else this PE's shard, shard_rows x n (any memory)
  float* partial = nullptr;  // symmetric m x n (ld n): this PE's partial product
  float* slots = nullptr;    // push: symmetric, n_pes * per_shard() * tile_m * tile_n
  float* reduced = nullptr;  // all_rows: symmetric m x n (ld n): the sums
  std::uint64_t* part_flags = nullptr;  // symmetric, n_pes * per_shard(): [sender][tile]
  std::uint64_t* sum_flags = nullptr;   // all_rows: symmetric, n_pes * per_shard()
  OverlapWords words;                   // ready: n_pes * per_shard() words
  std::size_t shard_rows = 0;           // ceil(m / n_pes) (gemm_rs: m / n_pes)
  std::size_t tile_m = 64;
  std::size_t tile_n = 256;
  bool pull = false;
  bool all_rows = true;  // gemm_ar: every PE receives all of C; false: gemm_rs's shard only

  TESSERA_HOST_DEVICE std::size_t m() const { return a.rows; }
  TESSERA_HOST_DEVICE std::size_t n() const { return b.cols; }
  TESSERA_HOST_DEVICE std::size_t tiles_n() const { return (n() + tile_n - 1) / tile_n; }
  TESSERA_HOST_DEVICE std::size_t per_shard() const {
    return ((shard_rows + tile_m - 1) / tile_m) * tiles_n();
  }
  // Tile t (= owner * per_shard() + index) of the grid; rows == 0 when it is empty.
  TESSERA_HOST_DEVICE ShardTile shard_tile(std::size_t t) const;

  // The Op interface of overlap.hpp.
  TESSERA_HOST_DEVICE std::size_t items(const Context& ctx) const {
    return static_cast<std::size_t>(ctx.n_pes) * per_shard();
  }
  TESSERA_HOST_DEVICE std::size_t tile(const Context& ctx, std::size_t i) const;
  TESSERA_HOST_DEVICE std::size_t finish_items(const Context& ctx) const {
    return all_rows ? items(ctx) : per_shard();
  }
  TESSERA_OVERLAP_OP_STEPS;

 private:
  template <class G>
  TESSERA_KERNEL_CODE void reduce(G g, const Context& ctx, std::size_t index) const;
  template <class G>
  TESSERA_KERNEL_CODE void collect(G g, const Context& ctx, std::size_t t) const;
};

// One kernel of the workgroup-specialised pattern: blocks [0, comm_blocks) communicate, the
// others compute (the grid is comm_blocks + compute blocks; args.words.groups = the grid).
template <class TA, class TB>
TESSERA_KERNEL_CODE void gemm_ar(Block blk, const Context& ctx, const GemmArArgs<TA, TB>& args,
                                 int comm_blocks);

}  // namespace tessera::device::ops

#include "tessera/device/ops/impl/gemm_ar_funcs.hpp"
