// gemm_as building blocks (device side of tessera::ops::GemmAs, host header
// <tessera/ops/gemm_as.hpp>): PE p computes the column block C[:, p * n_local, + n_local] =
// A x B_local and every PE receives every block. Each PE's block lives in its slot of
// `gathered` (symmetric, n_pes x m x n_local floats, slot p holding PE p's block). Per tile:
//   compute  the tile of this PE's block into its own slot;
//   publish  copied into this PE's c, then push: put into slot me of every peer's `gathered`
//            and flags[me][tile] set there; pull: only the flag is set on every peer;
//   collect  (the receiving steps: n_pes - 1 blocks x tiles) once flags[src][tile] is set, the
//            tile is copied into c from the local slot src (push) or from src's own slot, read
//            in place (pull).
// The roles of overlap.hpp schedule these.
#pragma once

#include <cstddef>
#include <cstdint>

#include "tessera/device/context.hpp"
#include "tessera/device/group.hpp"
#include "tessera/device/ops/gemm_tile.hpp"
#include "tessera/device/ops/overlap.hpp"
#include "tessera/device/tile.hpp"

namespace tessera::device::ops {

template <class TA, class TB>
struct GemmAsArgs {
  Tile<const TA> a;                // m x k
  Tile<const TB> b;                // k x n_local
  Tile<float> c;                   // m x n_local * n_pes (any memory)
  float* gathered = nullptr;       // symmetric, n_pes * m * n_local (slot p: PE p's block)
  std::uint64_t* flags = nullptr;  // symmetric, n_pes * tiles(): [source][tile]
  OverlapWords words;              // ready: tiles() words
  std::size_t tile_m = 64;
  std::size_t tile_n = 256;
  bool pull = false;

  TESSERA_HOST_DEVICE std::size_t m() const { return a.rows; }
  TESSERA_HOST_DEVICE std::size_t n_local() const { return b.cols; }
  TESSERA_HOST_DEVICE std::size_t tiles_n() const { return (n_local() + tile_n - 1) / tile_n; }
  TESSERA_HOST_DEVICE std::size_t tiles() const {
    return ((m() + tile_m - 1) / tile_m) * tiles_n();
  }
  // Tile t of PE pe's slot (ld n_local) on this PE.
  TESSERA_HOST_DEVICE Tile<float> slot_tile(int pe, std::size_t t) const;
  // Where tile t of PE pe's block goes in c.
  TESSERA_HOST_DEVICE Tile<float> c_tile(int pe, std::size_t t) const;

  // The Op interface of overlap.hpp.
  TESSERA_HOST_DEVICE std::size_t items(const Context&) const { return tiles(); }
  TESSERA_HOST_DEVICE std::size_t tile(const Context&, std::size_t i) const { return i; }
  TESSERA_HOST_DEVICE std::size_t finish_items(const Context& ctx) const {
    return static_cast<std::size_t>(ctx.n_pes - 1) * tiles();
  }
  TESSERA_OVERLAP_OP_STEPS;
};

// One kernel of the workgroup-specialised pattern: blocks [0, comm_blocks) scatter, the others
// compute (args.words.groups = the grid).
template <class TA, class TB>
TESSERA_KERNEL_CODE void gemm_as(Block blk, const Context& ctx, const GemmAsArgs<TA, TB>& args,
                                 int comm_blocks);

// The bulk-synchronous pattern's last step (group `rank` of `count`): copies every slot of an
// all-gathered `gathered` (n_pes x m x n_local) into its column block of c.
template <class G>
TESSERA_KERNEL_CODE void gather_columns(G g, Tile<float> c, const float* gathered, int n_pes,
                                        std::size_t n_local, int rank, int count);

}  // namespace tessera::device::ops

#include "tessera/device/ops/impl/gemm_as_funcs.hpp"
