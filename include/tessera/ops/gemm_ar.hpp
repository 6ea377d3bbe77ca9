// tessera::ops::GemmAr: C[M, N] = all_reduce over PEs of A_local[M, K_local] x B_local[K_local, N]
// (tensor parallelism's row-parallel linear layer), run in any overlap pattern (overlap.hpp). The
// kernels it launches are made of the building blocks in <tessera/device/ops/gemm_ar.hpp>
// (device/), which user kernels can call themselves.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "tessera/device/tile.hpp"
#include "tessera/ops/gemm_dtype.hpp"
#include "tessera/ops/overlap.hpp"
#include "tessera/runtime.hpp"
#include "tessera/stream.hpp"

namespace tessera::ops {

struct GemmArOptions {
  OverlapPattern pattern = OverlapPattern::automatic;  // resolve_overlap(OpKind::gemm_ar, ...)
  CommDirection direction = CommDirection::automatic;  // not for bulk_synchronous
  int comm_blocks = 1;     // workgroup_specialized / producer_consumer: blocks that communicate
  int compute_blocks = 3;  // blocks that compute (fused_sequential: blocks that do both)
  // C's tile per compute step; both 0 (the default): kHostGemmTile on the host backend,
  // kGpuGemmTile on a GPU backend (overlap.hpp).
  std::size_t tile_m = 0;
  std::size_t tile_n = 0;
  // Test hook: each tile's communication waits this long before it starts, so the PEs that wait
  // for it reach their waits first. 0 in production.
  std::uint32_t comm_delay_us = 0;
};

class GemmAr {
 public:
  // Collective: resolves the pattern and direction and allocates the symmetric workspace (about
  // 3 x m x n floats plus a flag per tile and PE; bulk_synchronous: m x n floats and the world
  // team of the fused ops). The pattern runs as:
  //   bulk_synchronous       the GEMM kernel into the workspace, then ops::all_reduce in place,
  //                          then a copy into c;
  //   producer_consumer      the GEMM kernel on the caller's stream and the communication kernel
  //                          on a stream this object owns, tiles handed over by flags; the
  //                          caller's stream waits for the second one (Stream::wait_for);
  //   workgroup_specialized  one kernel, comm_blocks blocks communicate, compute_blocks compute;
  //   fused_sequential       one kernel, each block publishes every tile right after computing it.
  // The reduction is owned by rows: C's rows are cut into n_pes shards of ceil(m / n_pes) rows
  // (the last ones short or empty), PE o owns the tiles of shard o; every PE's partial of a tile
  // reaches its owner (push: put into the owner's heap; pull: the owner reads it in place), the
  // owner sums in fp32 and every PE receives the sum (push: the owner puts it; pull: every PE reads
  // it). Throws Error(invalid_argument) on a zero shape, bad options or a pattern/direction that
  // does not apply (bulk_synchronous with push or pull), Error(transport) when pull is asked for
  // and a peer is not mapped, Error(out_of_memory) when the heap cannot hold the workspace.
  GemmAr(Runtime& rt, std::size_t m, std::size_t n, std::size_t k_local, GemmDtype dtype,
         const GemmArOptions& options = {});
  GemmAr(GemmAr&&) noexcept;
  GemmAr& operator=(GemmAr&&) noexcept;
  ~GemmAr();  // frees the workspace collectively (destroy in the same order everywhere)

  // Enqueues one call on `stream` (stream-ordered, like a kernel): a is this PE's m x k_local, b
  // its k_local x n, c (any memory, m x n fp32) receives the sum over all PEs (dense, row-major).
  // Once the stream has run it, a and b may be overwritten and c holds the result; no barrier is
  // needed between calls. Every PE makes the same calls in the same order. Throws
  // Error(invalid_argument) on a null pointer or a dtype other than the one constructed with;
  // producer_consumer on a native GPU stream throws Error(backend) (Stream::wait_for is host-only
  // for now).
  void run(Stream& stream, const float* a, const float* b, float* c);
  void run(Stream& stream, const device::bf16* a, const device::bf16* b, float* c);

  // The pattern `automatic` resolved to (never automatic).
  OverlapPattern pattern() const;
  // The direction chosen (push or pull; automatic for bulk_synchronous, whose collective picks).
  CommDirection direction() const;

  std::size_t m() const;
  std::size_t n() const;
  std::size_t k_local() const;
  GemmDtype dtype() const;

 private:
  struct State;
  template <class T>
  void run_typed(Stream& stream, const T* a, const T* b, float* c);
  std::unique_ptr<State> state_;
};

}  // namespace tessera::ops
