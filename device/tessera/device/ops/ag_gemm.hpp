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
#include "tessera/device/ops/epilogue.hpp"
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
  std::size_t tile_m = 64;      // rows of a C tile
  std::size_t tile_n = 256;     // columns of a C tile
  std::size_t chunk_rows = 64;  // rows of A per pushed chunk (push)
  int compute_blocks = 1;       // groups calling ag_gemm_compute per PE (fixed per call site)
  // The call's number: 1 for the first call, then 2, 3, ... Set it inside the kernel from a
  // device::DeviceEpoch (DeviceEpoch::next_in_grid) when the launch may be captured into a Graph
  // and replayed: an epoch passed from the host is frozen at capture (docs/graphs.md). The
  // library's launchers do so.
  std::uint64_t epoch = 0;
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
TESSERA_KERNEL_CODE void ag_gemm_communicate(G g, const Context& ctx,
                                             const AgGemmArgs<TA, TB>& args, int rank, int count);

// The compute role (group `rank` of args.compute_blocks compute groups of this PE): computes its
// share of C's tiles, each once every row of A it needs is there (push: its chunk flags; pull:
// the owner's ready flag), calls epi(g, c_tile, row0, col0) on each finished tile, then (pull)
// joins the reuse handshake. C is complete on this PE once every compute group has returned.
template <class G, class TA, class TB, class Epilogue = NoEpilogue>
TESSERA_KERNEL_CODE void ag_gemm_compute(G g, const Context& ctx, const AgGemmArgs<TA, TB>& args,
                                         int rank, Epilogue epi = {});

// Both roles in one call, for a grid of `comm_blocks + args.compute_blocks` blocks: blocks
// [0, comm_blocks) communicate, the others compute.
template <class TA, class TB, class Epilogue = NoEpilogue>
TESSERA_KERNEL_CODE void ag_gemm(Block blk, const Context& ctx, const AgGemmArgs<TA, TB>& args,
                                 int comm_blocks, Epilogue epi = {});

// The fused-sequential pattern, every block of the grid (args.compute_blocks = the grid): push:
// block b publishes chunks b, b + grid, ... of the shard, then computes its share of C's tiles;
// pull: block 0 announces the shard, every block computes, and block 0 waits until every PE has
// finished reading this PE's shard before it returns.
template <class TA, class TB, class Epilogue = NoEpilogue>
TESSERA_KERNEL_CODE void ag_gemm_fused(Block blk, const Context& ctx,
                                       const AgGemmArgs<TA, TB>& args, Epilogue epi = {});

}  // namespace tessera::device::ops

#include "tessera/device/ops/impl/ag_gemm_funcs.hpp"
