// Bodies of ops/gemm_rs.hpp.
#pragma once

#include <cstddef>
#include <cstdint>

#include "tessera/device/ops/gemm_rs.hpp"
#include "tessera/device/ops/gemm_tile.hpp"
#include "tessera/device/ops/impl/fused_handshake.hpp"
#include "tessera/device/ops/overlap.hpp"
#include "tessera/device/rma.hpp"
#include "tessera/device/signal.hpp"

namespace tessera::device::ops {

template <class G, class TA, class TB, class Epilogue>
TESSERA_KERNEL_CODE void gemm_rs(G g, const Context& ctx, const GemmRsArgs<TA, TB>& args, int rank,
                                 Epilogue epi) {
  const int n_pes = ctx.n_pes, me = ctx.my_pe;
  const std::uint64_t e = args.epoch;
  const std::size_t m_local = args.m_local(), n = args.c.cols, k = args.a.cols;
  const std::size_t per_shard = args.tiles_per_shard();
  float* scratch = args.scratch + static_cast<std::size_t>(rank) * args.tile_m * args.tile_n;
  int waited_for = -1;  // the last owner whose consumed flag this group has checked
  for (std::size_t w = static_cast<std::size_t>(rank);
       w < static_cast<std::size_t>(n_pes) * per_shard;
       w += static_cast<std::size_t>(args.compute_blocks)) {
    const int owner = (me + 1 + static_cast<int>(w / per_shard)) % n_pes;
    const std::size_t t = w % per_shard;
    const GridTile tile = grid_tile(t, m_local, n, args.tile_m, args.tile_n);
    const std::size_t r0 = tile.r0, c0 = tile.c0, rows = tile.rows, cols = tile.cols;
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
