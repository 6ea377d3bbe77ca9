// Host pieces every fused op's launcher shares: resolving and checking the overlap pattern and
// direction, the world team of the bulk-synchronous collectives, and the two-stream launch of
// producer_consumer. Internal.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "tessera/device/context.hpp"
#include "tessera/ops/gemm_dtype.hpp"
#include "tessera/ops/overlap.hpp"
#include "tessera/runtime.hpp"
#include "tessera/stream.hpp"
#include "tessera/team.hpp"

namespace tessera::detail {

struct ResolvedOverlap {
  ops::OverlapPattern pattern = ops::OverlapPattern::bulk_synchronous;
  ops::CommDirection direction = ops::CommDirection::automatic;
};

// True when every peer's heap is load/store reachable from this PE.
bool all_peers_mapped(const device::Context& ctx);

// The pattern and direction `op` runs with on this job: automatic resolved by resolve_overlap
// and resolve_direction. Throws Error(invalid_argument) "<op>: pattern X does not apply ..." or
// "<op>: direction X does not apply to bulk_synchronous ...", and Error(transport) when pull is
// asked for and a peer is not mapped.
ResolvedOverlap resolve_fused(Runtime& rt, ops::OpKind op, ops::OverlapPattern pattern,
                              ops::CommDirection direction, std::size_t m, std::size_t n,
                              std::size_t k);

// Resolves a fused GEMM op's tile in place: both 0 becomes the backend's default
// (ops::kHostGemmTile or ops::kGpuGemmTile), each side at most C's rows x cols; both at least 1
// stay. Throws Error(invalid_argument) "<op>: tile_m and tile_n must both be 0 (the backend's
// default tile) or both at least 1, got X and Y" otherwise.
void resolve_gemm_tile(Runtime& rt, const char* op, std::size_t& tile_m, std::size_t& tile_n,
                       std::size_t rows, std::size_t cols);
// The default tile of `backend` for C of rows x cols (what resolve_gemm_tile picks for 0 x 0).
ops::GemmTileShape default_gemm_tile(Backend backend, std::size_t rows, std::size_t cols);

// The world team the fused ops' bulk-synchronous collectives run on: made (collectively) at the
// first use on this Runtime and kept until finalize.
const Team& fused_world_team(Runtime& rt);

// The second stream of producer_consumer: made on this PE for the op that owns it.
std::unique_ptr<Stream> make_comm_stream(Runtime& rt);

// The checks every fused GEMM's run() makes of its arguments: the inputs' element type against
// the one the op was made for, and no null pointer (a_name names the first input: "a" or
// "a_shard"). Throws Error(invalid_argument) "<op>: dtype mismatch: constructed for X inputs,
// called with Y" or "<op>: null <name> on PE <pe>".
void check_gemm_run(const char* op, int pe, ops::GemmDtype constructed, ops::GemmDtype given,
                    const char* a_name, const void* a, const void* b, const void* c);

}  // namespace tessera::detail

#include "tessera/device/ops/overlap.hpp"
#include "tessera/device/signal.hpp"
#include "tessera/launch.hpp"

namespace tessera::detail {

// The kernels of the tile-pipelined patterns, for any Op of <tessera/device/ops/overlap.hpp>.
// Each takes the call's epoch on the device from `epoch` (every block of the grid the same;
// next_in_grid) into its copy of op.words, so a captured launch takes a new one each replay.
struct OverlapSpecializedKernel {
  template <class Op>
  TESSERA_KERNEL_CODE void operator()(device::Block blk, device::Context ctx, Op op,
                                      device::DeviceEpoch epoch, int comm_blocks) const {
    op.words.epoch = epoch.next_in_grid(blk);
    device::ops::overlap_specialized(blk, ctx, op, comm_blocks);
  }
};

struct OverlapComputeKernel {
  template <class Op>
  TESSERA_KERNEL_CODE void operator()(device::Block blk, device::Context ctx, Op op,
                                      device::DeviceEpoch epoch) const {
    op.words.epoch = epoch.next_in_grid(blk);
    device::ops::overlap_compute(blk, ctx, op, blk.block_id(), blk.grid_size());
  }
};

struct OverlapCommunicateKernel {
  template <class Op>
  TESSERA_KERNEL_CODE void operator()(device::Block blk, device::Context ctx, Op op,
                                      device::DeviceEpoch epoch) const {
    op.words.epoch = epoch.next_in_grid(blk);
    device::ops::overlap_communicate(blk, ctx, op, blk.block_id(), blk.grid_size());
  }
};

struct OverlapFusedKernel {
  template <class Op>
  TESSERA_KERNEL_CODE void operator()(device::Block blk, device::Context ctx, Op op,
                                      device::DeviceEpoch epoch) const {
    op.words.epoch = epoch.next_in_grid(blk);
    device::ops::overlap_fused(blk, ctx, op, blk.block_id(), blk.grid_size());
  }
};

// The bulk-synchronous GEMM kernel.
struct GemmTilesKernel {
  template <class TA, class TB>
  TESSERA_KERNEL_CODE void operator()(device::Block blk, device::Tile<float> c,
                                      device::Tile<const TA> a, device::Tile<const TB> b,
                                      std::size_t tile_m, std::size_t tile_n) const {
    device::ops::gemm_tiles(blk, c, a, b, tile_m, tile_n, blk.block_id(), blk.grid_size());
  }
};

// Groups taking part in one call of a pipelined pattern (OverlapWords::groups).
inline int overlap_groups(ops::OverlapPattern pattern, int comm_blocks, int compute_blocks) {
  return pattern == ops::OverlapPattern::fused_sequential ? compute_blocks
                                                          : comm_blocks + compute_blocks;
}

// Enqueues one call of a pipelined pattern (workgroup_specialized, producer_consumer,
// fused_sequential) of `op` on `stream`; producer_consumer runs the communication kernel on
// `comm`, which first waits for the work already on `stream` (the call's inputs), and makes
// `stream` wait for it. The kernel on `stream` takes the call's epoch from `main_epoch`, the one
// on `comm` from `comm_epoch` (each advanced once per call on its own stream: they agree).
template <class Op>
void launch_pipelined(Stream& stream, Stream* comm, ops::OverlapPattern pattern,
                      const device::Context& ctx, const Op& op, int comm_blocks, int compute_blocks,
                      device::DeviceEpoch main_epoch, device::DeviceEpoch comm_epoch) {
  switch (pattern) {
    case ops::OverlapPattern::workgroup_specialized:
      launch(stream, comm_blocks + compute_blocks, OverlapSpecializedKernel{}, ctx, op, main_epoch,
             comm_blocks);
      return;
    case ops::OverlapPattern::producer_consumer:
      comm->wait_for(stream);
      launch(*comm, comm_blocks, OverlapCommunicateKernel{}, ctx, op, comm_epoch);
      launch(stream, compute_blocks, OverlapComputeKernel{}, ctx, op, main_epoch);
      stream.wait_for(*comm);
      return;
    default:
      launch(stream, compute_blocks, OverlapFusedKernel{}, ctx, op, main_epoch);
      return;
  }
}

}  // namespace tessera::detail
