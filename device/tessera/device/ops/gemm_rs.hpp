// gemm_rs building block (device side of tessera::ops::GemmRs, whose host header is
// <tessera/ops/gemm_rs.hpp>): C_shard[M/P, N] = reduce_scatter(A[M, K_local] x B[K_local, N]), the
// reduction overlapped with the GEMM. For use inside a user kernel: every participating group
// calls gemm_rs(g, ctx, args, rank) with its rank among args.compute_blocks groups.
//
// Each PE computes its partial product tile by tile in destination order, starting with the rows
// owned by my_pe + 1 and ending with its own. A partial tile for PE `owner` goes into the
// owner's slot for this PE (slots: symmetric, n_pes x m_local x n floats on every PE), followed
// by the tile's flag set to the call's epoch: written in place with a release signal when the
// owner's heap is mapped, else computed into `scratch` and sent with put_signal. An own tile is
// computed straight into C, then every other PE's partial is added in fp32 as its flag arrives.
//
// Reuse across calls (epochs, never reset, no barrier between calls): a PE must not write call
// e's partial into an owner's slot while the owner may still be summing call e - 1's. When all
// compute groups of a PE have summed their tiles, the last one sets consumed[me] = e on every PE
// (detail::finish_reading); before its first write to `owner` in call e a group waits for
// consumed[owner] >= e - 1.
#pragma once

#include <cstddef>
#include <cstdint>

#include "tessera/device/context.hpp"
#include "tessera/device/group.hpp"
#include "tessera/device/ops/detail/fused_handshake.hpp"
#include "tessera/device/ops/gemm_tile.hpp"
#include "tessera/device/order.hpp"
#include "tessera/device/signal.hpp"
#include "tessera/device/tile.hpp"

namespace tessera::device::ops {

template <class TA, class TB>
struct GemmRsArgs {
  Tile<const TA> a;          // m x k_local (m = m_local * n_pes)
  Tile<const TB> b;          // k_local x n
  Tile<float> c;             // m_local x n: this PE's rows of the sum
  float* slots = nullptr;    // symmetric, n_pes * m_local * n: slot s holds PE s's partial
  float* scratch = nullptr;  // local, compute_blocks * tile_m * tile_n (unmapped owners only)
  std::uint64_t* tile_flags = nullptr;    // symmetric, n_pes * tiles_per_shard() words
  std::uint64_t* consumed = nullptr;      // symmetric, n_pes words (the reuse handshake)
  std::uint64_t* readers_done = nullptr;  // symmetric, 1 word: groups done, all calls
  std::size_t tile_m = 64;
  std::size_t tile_n = 256;
  int compute_blocks = 1;           // groups calling gemm_rs per PE (fixed per call site)
  std::uint64_t epoch = 0;          // 1 for the first call, then 2, 3, ...
  std::uint32_t comm_delay_us = 0;  // test hook: delay before each partial tile is published

  TESSERA_HOST_DEVICE std::size_t m_local() const { return c.rows; }
  TESSERA_HOST_DEVICE std::size_t tiles_m() const { return (c.rows + tile_m - 1) / tile_m; }
  TESSERA_HOST_DEVICE std::size_t tiles_n() const { return (c.cols + tile_n - 1) / tile_n; }
  TESSERA_HOST_DEVICE std::size_t tiles_per_shard() const { return tiles_m() * tiles_n(); }
};

// Group `rank` of args.compute_blocks: computes its share of the partial tiles (work item w of
// n_pes * tiles_per_shard(), destination-major starting at my_pe + 1, goes to group
// w mod compute_blocks), publishes the remote ones, and sums its own tiles of C, calling
// epi(g, c_tile, row0, col0) on each finished one (row0 within this PE's shard). C is complete on
// this PE once every group has returned.
template <class G, class TA, class TB, class Epilogue = NoEpilogue>
TESSERA_DEVICE void gemm_rs(G g, const Context& ctx, const GemmRsArgs<TA, TB>& args, int rank,
                            Epilogue epi = {}) {
  const int n_pes = ctx.n_pes, me = ctx.my_pe;
  const std::uint64_t e = args.epoch;
  const std::size_t m_local = args.m_local(), n = args.c.cols, k = args.a.cols;
  const std::size_t tiles_n = args.tiles_n(), per_shard = args.tiles_per_shard();
  float* scratch = args.scratch + static_cast<std::size_t>(rank) * args.tile_m * args.tile_n;
  int waited_for = -1;  // the last owner whose consumed flag this group has checked
  for (std::size_t w = static_cast<std::size_t>(rank);
       w < static_cast<std::size_t>(n_pes) * per_shard;
       w += static_cast<std::size_t>(args.compute_blocks)) {
    const int owner = (me + 1 + static_cast<int>(w / per_shard)) % n_pes;
    const std::size_t t = w % per_shard;
    const std::size_t r0 = (t / tiles_n) * args.tile_m, c0 = (t % tiles_n) * args.tile_n;
    const std::size_t rows = r0 + args.tile_m < m_local ? args.tile_m : m_local - r0;
    const std::size_t cols = c0 + args.tile_n < n ? args.tile_n : n - c0;
    const std::size_t grow = static_cast<std::size_t>(owner) * m_local + r0;
    const Tile<const TA> a = args.a.sub(grow, 0, rows, k);
    const Tile<const TB> b = args.b.sub(0, c0, k, cols);
    if (owner != me) {
      if (owner != waited_for) {
        wait_until(g, ctx, &args.consumed[owner], Cmp::ge, e - 1);
        waited_for = owner;
      }
      float* slot = args.slots + static_cast<std::size_t>(me) * m_local * n;
      const Tile<float> dst(slot + r0 * n + c0, rows, cols, n);
      std::uint64_t* flag = &args.tile_flags[static_cast<std::size_t>(me) * per_shard + t];
      float* remote = ctx.ptr(dst.data, owner);
      if (remote != nullptr) {
        gemm_tile(g, dst.with_data(remote), a, b, false);
        detail::delay_us(args.comm_delay_us);
        if (g.rank() == 0) signal(ctx, flag, e, SignalOp::set, owner, Sem::release);
        g.sync();
      } else {
        const Tile<float> tmp(scratch, rows, cols, cols);
        gemm_tile(g, tmp, a, b, false);
        detail::delay_us(args.comm_delay_us);
        put_signal(g, ctx, dst, Tile<const float>(tmp), flag, e, SignalOp::set, owner);
      }
      continue;
    }
    // My own tile: my partial, then every peer's as it arrives (the nearest sender first: PE
    // me - 1 computes my rows first).
    const Tile<float> c = args.c.sub(r0, c0, rows, cols);
    gemm_tile(g, c, a, b, false);
    for (int i = 1; i < n_pes; ++i) {
      const int src = (me - i + n_pes) % n_pes;
      wait_until(g, ctx, &args.tile_flags[static_cast<std::size_t>(src) * per_shard + t], Cmp::ge,
                 e);
      const float* slot = args.slots + static_cast<std::size_t>(src) * m_local * n;
      for (std::size_t r = static_cast<std::size_t>(g.rank()); r < rows;
           r += static_cast<std::size_t>(g.size())) {
        float* crow = c.row(r);
        const float* prow = slot + (r0 + r) * n + c0;
        for (std::size_t j = 0; j < cols; ++j) crow[j] += prow[j];
      }
      g.sync();
    }
    epi(g, c, r0, c0);
  }
  detail::finish_reading(g, ctx, args.readers_done, args.consumed, args.compute_blocks, e);
}

}  // namespace tessera::device::ops
