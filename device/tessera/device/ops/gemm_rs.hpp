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
#include "tessera/device/ops/epilogue.hpp"
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
  int compute_blocks = 1;  // groups calling gemm_rs per PE (fixed per call site)
  // The call's number: 1 for the first call, then 2, 3, ... Set it inside the kernel from a
  // device::DeviceEpoch (DeviceEpoch::next_in_grid) when the launch may be captured into a Graph
  // and replayed: an epoch passed from the host is frozen at capture (docs/graphs.md). The
  // library's launchers do so.
  std::uint64_t epoch = 0;
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
TESSERA_KERNEL_CODE void gemm_rs(G g, const Context& ctx, const GemmRsArgs<TA, TB>& args, int rank,
                                 Epilogue epi = {});

}  // namespace tessera::device::ops

#include "tessera/device/ops/impl/gemm_rs_funcs.hpp"
