// Bodies of ops/ag_gemm.hpp.
#pragma once

#include <cstddef>
#include <cstdint>

#include "tessera/device/ops/ag_gemm.hpp"
#include "tessera/device/ops/gemm_tile.hpp"
#include "tessera/device/ops/impl/fused_handshake.hpp"
#include "tessera/device/rma.hpp"
#include "tessera/device/signal.hpp"

namespace tessera::device::ops {

template <class G, class TA, class TB>
TESSERA_KERNEL_CODE void ag_gemm_communicate(G g, const Context& ctx,
                                             const AgGemmArgs<TA, TB>& args, int rank, int count) {
  const int n = ctx.n_pes, me = ctx.my_pe;
  const std::uint64_t e = args.epoch;
  if (args.algo == AgGemmAlgo::pull) {
    if (rank != 0) return;
    detail::delay_us(args.comm_delay_us);
    if (g.rank() == 0) {
      for (int pe = 0; pe < n; ++pe) {
        signal(ctx, &args.ready[me], e, SignalOp::set, pe, Sem::release, Scope::system);
      }
    }
    for (int pe = 0; pe < n; ++pe) {
      if (pe != me) wait_until(g, ctx, &args.consumed[pe], Cmp::ge, e);
    }
    return;
  }
  const std::size_t chunks = args.chunks_per_shard();
  const std::size_t k = args.a_shard.cols;
  if (rank == 0 && g.rank() == 0) {
    for (int pe = 0; pe < n; ++pe) {
      signal(ctx, &args.consumed[me], e - 1, SignalOp::set, pe, Sem::release, Scope::system);
    }
  }
  // Chunk-major, so every peer gets its first chunk early; myself last (my compute blocks read
  // my rows from a_shard directly; my gathered copy is only for the caller).
  for (std::size_t ch = static_cast<std::size_t>(rank); ch < chunks;
       ch += static_cast<std::size_t>(count)) {
    const std::size_t row0 = ch * args.chunk_rows;
    const std::size_t rows =
        args.m_local() - row0 < args.chunk_rows ? args.m_local() - row0 : args.chunk_rows;
    detail::delay_us(args.comm_delay_us);
    for (int i = 1; i <= n; ++i) {
      const int pe = (me + i) % n;
      // call e - 1's copy on `pe` is its caller's until pe enters call e
      if (ch < static_cast<std::size_t>(count)) {
        wait_until(g, ctx, &args.consumed[pe], Cmp::ge, e - 1);
      }
      const std::size_t grow = static_cast<std::size_t>(me) * args.m_local() + row0;
      Tile<TA> dst(args.gathered + grow * k, rows, k, k);
      put_signal(g, ctx, dst, args.a_shard.sub(row0, 0, rows, k),
                 &args.chunk_flags[static_cast<std::size_t>(me) * chunks + ch], e, SignalOp::set,
                 pe);
    }
  }
  quiet(g, ctx);
}

template <class G, class TA, class TB, class Epilogue>
TESSERA_KERNEL_CODE void ag_gemm_compute(G g, const Context& ctx, const AgGemmArgs<TA, TB>& args,
                                         int rank, Epilogue epi) {
  const int me = ctx.my_pe;
  const std::uint64_t e = args.epoch;
  const std::size_t m_local = args.m_local(), k = args.a_shard.cols;
  const std::size_t m = args.c.rows, n_cols = args.c.cols;
  const std::size_t tiles_m = (m + args.tile_m - 1) / args.tile_m;
  const std::size_t tiles_n = (n_cols + args.tile_n - 1) / args.tile_n;
  const std::size_t chunks = args.chunks_per_shard();
  // tile_m' = (tile_m + first tile of my rows) mod tiles_m: start on local rows.
  const std::size_t first = static_cast<std::size_t>(me) * m_local / args.tile_m;
  for (std::size_t w = static_cast<std::size_t>(rank); w < tiles_m * tiles_n;
       w += static_cast<std::size_t>(args.compute_blocks)) {
    const std::size_t tm = (w / tiles_n + first) % tiles_m, tn = w % tiles_n;
    const std::size_t r0 = tm * args.tile_m, c0 = tn * args.tile_n;
    const std::size_t r1 = r0 + args.tile_m < m ? r0 + args.tile_m : m;
    const std::size_t cols = c0 + args.tile_n < n_cols ? args.tile_n : n_cols - c0;
    const Tile<const TB> b = args.b.sub(0, c0, k, cols);
    // One segment per owner the tile's rows cover.
    for (std::size_t row = r0; row < r1;) {
      const int owner = static_cast<int>(row / m_local);
      const std::size_t owner_end = (static_cast<std::size_t>(owner) + 1) * m_local;
      const std::size_t seg_end = owner_end < r1 ? owner_end : r1;
      const std::size_t lrow = row - static_cast<std::size_t>(owner) * m_local;
      const std::size_t rows = seg_end - row;
      Tile<const TA> a;
      if (owner == me) {
        a = args.a_shard.sub(lrow, 0, rows, k);
      } else if (args.algo == AgGemmAlgo::pull) {
        wait_until(g, ctx, &args.ready[owner], Cmp::ge, e);
        a = args.a_shard.sub(lrow, 0, rows, k)
                .with_data(ctx.ptr(args.a_shard.data, owner) + lrow * args.a_shard.ld);
      } else {
        const std::uint64_t* flags = args.chunk_flags + static_cast<std::size_t>(owner) * chunks;
        for (std::size_t ch = lrow / args.chunk_rows; ch <= (lrow + rows - 1) / args.chunk_rows;
             ++ch) {
          wait_until(g, ctx, &flags[ch], Cmp::ge, e);
        }
        a = Tile<const TA>(args.gathered + row * k, rows, k, k);
      }
      gemm_tile(g, args.c.sub(row, c0, rows, cols), a, b, false);
      row = seg_end;
    }
    epi(g, args.c.sub(r0, c0, r1 - r0, cols), r0, c0);
  }
  if (args.algo == AgGemmAlgo::pull) {
    detail::finish_reading(g, ctx, args.readers_done, args.consumed, args.compute_blocks, e);
  }
}

template <class TA, class TB, class Epilogue>
TESSERA_KERNEL_CODE void ag_gemm(Block blk, const Context& ctx, const AgGemmArgs<TA, TB>& args,
                                 int comm_blocks, Epilogue epi) {
  if (blk.block_id() < comm_blocks) {
    ag_gemm_communicate(blk, ctx, args, blk.block_id(), comm_blocks);
  } else {
    ag_gemm_compute(blk, ctx, args, blk.block_id() - comm_blocks, epi);
  }
}

template <class TA, class TB, class Epilogue>
TESSERA_KERNEL_CODE void ag_gemm_fused(Block blk, const Context& ctx,
                                       const AgGemmArgs<TA, TB>& args, Epilogue epi) {
  const int b = blk.block_id();
  if (args.algo == AgGemmAlgo::push) {
    ag_gemm_communicate(blk, ctx, args, b, blk.grid_size());
    ag_gemm_compute(blk, ctx, args, b, epi);
    return;
  }
  const int n = ctx.n_pes, me = ctx.my_pe;
  const std::uint64_t e = args.epoch;
  if (b == 0) {
    detail::delay_us(args.comm_delay_us);
    if (blk.rank() == 0) {
      for (int pe = 0; pe < n; ++pe) {
        signal(ctx, &args.ready[me], e, SignalOp::set, pe, Sem::release, Scope::system);
      }
    }
  }
  ag_gemm_compute(blk, ctx, args, b, epi);
  if (b != 0) return;
  for (int pe = 0; pe < n; ++pe) {
    if (pe != me) wait_until(blk, ctx, &args.consumed[pe], Cmp::ge, e);
  }
}

}  // namespace tessera::device::ops
