// ag_gemm building block (device side of tessera::ops::AgGemm, whose host header is
// <tessera/ops/ag_gemm.hpp>): C[M, N_local] = allgather(A_shard[M/P, K]) x B[K, N_local], with the
// gather overlapped with the GEMM. For use inside a user kernel: give one or more blocks the
// communication role and the others the compute role, e.g.
//
//   if (blk.block_id() < comm_blocks) ag_gemm_communicate(blk, ctx, args, blk.block_id(),
//   comm_blocks); else ag_gemm_compute(blk, ctx, args, blk.block_id() - comm_blocks, my_epilogue);
//
// Two algorithms share the arguments:
// - push: the communication blocks put_signal the local shard, chunk by chunk, into every PE's
//   gathered copy of A (one flag per chunk, set to the call's epoch); compute blocks wait on the
//   flags of the chunks a C tile covers (a tile may straddle two ranks' shards) and read the
//   gathered copy. Works over any transport.
// - pull: every PE's shard stays where it is (it must be symmetric); the communication block
//   tells every PE "my shard of call e is ready" and compute blocks read the owner's rows straight
//   from its mapped heap. No gathered copy is made; needs every peer mapped (ctx.is_mapped).
//
// Compute blocks walk C's row tiles starting at their own rank's rows, so they start on local
// data while the first remote chunks are in flight.
//
// Reuse across calls (epochs, never reset, no barrier between calls): PE q must not overwrite
// what a peer may still read from call e - 1. The words consumed[p] carry that handshake:
// - push: the gathered copy of call e - 1 is the caller's until its next call, so entering call
//   e, a PE's communication block sets consumed[me] = e - 1 on every PE ("I am done with call
//   e - 1's copy"), and before writing its shard into PE p's copy for call e it waits for
//   consumed[p] >= e - 1. Compute blocks of p only read call e's rows after call e's flags.
// - pull: there is no copy; peers read the owner's shard itself. When all compute blocks of a
//   PE have finished call e, the last one sets consumed[me] = e on every PE
//   (detail::finish_reading), and before the kernel of call e ends the communication block waits
//   for consumed[p] >= e from every p, so once the kernel is done the caller may overwrite its
//   shard.
// In both, flags of call e + 1 (>= e + 1) still satisfy waits of call e, so nothing is reset. A
// workspace serves one algorithm: the two read consumed[] differently.
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

enum class AgGemmAlgo : std::uint8_t { push, pull };

// Everything one ag_gemm call needs; the same on every PE except the local pointers' contents.
// Symmetric words and buffers are allocated once per call site and reused with a growing epoch.
template <class TA, class TB>
struct AgGemmArgs {
  Tile<const TA> a_shard;  // m_local x k, this PE's rows of A; symmetric for pull
  Tile<const TB> b;        // k x n_local
  Tile<float> c;           // m x n_local (m = m_local * n_pes), written by the compute blocks
  TA* gathered = nullptr;  // push: symmetric m x k (ld k), every PE's shard after the call
  std::uint64_t* chunk_flags = nullptr;   // push: symmetric, n_pes * chunks_per_shard() words
  std::uint64_t* ready = nullptr;         // pull: symmetric, n_pes words
  std::uint64_t* consumed = nullptr;      // symmetric, n_pes words (the reuse handshake)
  std::uint64_t* readers_done = nullptr;  // pull: symmetric, 1 word: compute blocks done
  AgGemmAlgo algo = AgGemmAlgo::push;
  std::size_t tile_m = 64;          // rows of a C tile
  std::size_t tile_n = 256;         // columns of a C tile
  std::size_t chunk_rows = 64;      // rows of A per pushed chunk (push)
  int compute_blocks = 1;           // groups calling ag_gemm_compute per PE (fixed per call site)
  std::uint64_t epoch = 0;          // 1 for the first call, then 2, 3, ...
  std::uint32_t comm_delay_us = 0;  // test hook: delay before each chunk is published

  TESSERA_HOST_DEVICE std::size_t m_local() const { return a_shard.rows; }
  TESSERA_HOST_DEVICE std::size_t chunks_per_shard() const {
    return (a_shard.rows + chunk_rows - 1) / chunk_rows;
  }
};

// The communication role (group `rank` of `count` communication groups of this PE).
// push: puts chunks of this PE's shard into every PE's gathered copy, peers first (starting at
// my_pe + 1), one flag per chunk; pull: signals ready = epoch to every PE, then waits until every
// PE has finished reading this PE's shard. Returns once its puts are complete.
template <class G, class TA, class TB>
TESSERA_DEVICE void ag_gemm_communicate(G g, const Context& ctx, const AgGemmArgs<TA, TB>& args,
                                        int rank, int count) {
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

// The compute role (group `rank` of args.compute_blocks compute groups of this PE): computes its
// share of C's tiles, each once every row of A it needs is there (push: its chunk flags; pull:
// the owner's ready flag), calls epi(g, c_tile, row0, col0) on each finished tile, then (pull)
// joins the reuse handshake. C is complete on this PE once every compute group has returned.
template <class G, class TA, class TB, class Epilogue = NoEpilogue>
TESSERA_DEVICE void ag_gemm_compute(G g, const Context& ctx, const AgGemmArgs<TA, TB>& args,
                                    int rank, Epilogue epi = {}) {
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

// Both roles in one call, for a grid of `comm_blocks + args.compute_blocks` blocks: blocks
// [0, comm_blocks) communicate, the others compute.
template <class TA, class TB, class Epilogue = NoEpilogue>
TESSERA_DEVICE void ag_gemm(Block blk, const Context& ctx, const AgGemmArgs<TA, TB>& args,
                            int comm_blocks, Epilogue epi = {}) {
  if (blk.block_id() < comm_blocks) {
    ag_gemm_communicate(blk, ctx, args, blk.block_id(), comm_blocks);
  } else {
    ag_gemm_compute(blk, ctx, args, blk.block_id() - comm_blocks, epi);
  }
}

}  // namespace tessera::device::ops
