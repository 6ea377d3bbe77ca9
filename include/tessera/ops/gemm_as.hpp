// tessera::ops::GemmAs: C[M, N_local * P] where PE p computes its column block
// C[:, p * N_local, + N_local] = A[M, K] x B_local[K, N_local] and all-scatters it, so every PE
// holds all of C (tensor parallelism's column-parallel linear layer followed by a gather), run in
// any overlap pattern (overlap.hpp). The kernels it launches are made of the building blocks in
// <tessera/device/ops/gemm_as.hpp> (device/), which user kernels can call themselves.
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

struct GemmAsOptions {
  OverlapPattern pattern = OverlapPattern::automatic;  // resolve_overlap(OpKind::gemm_as, ...)
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

class GemmAs {
 public:
  // Collective: resolves the pattern and direction and allocates the symmetric workspace (the
  // gathered blocks, n_pes x m x n_local floats, plus a flag per tile and PE). c itself need not
  // be in the heap in any pattern: each PE computes its block into its slot of the workspace,
  // peers' blocks land in (push) or are read from (pull) the workspace, and every block is copied
  // into c as it arrives. The pattern runs as:
  //   bulk_synchronous       the GEMM kernel into this PE's slot, then ops::all_gather in place,
  //                          then a copy into c;
  //   producer_consumer      the GEMM kernel on the caller's stream and the scatter kernel on a
  //                          stream this object owns, tiles handed over by flags; the caller's
  //                          stream waits for the second one (Stream::wait_for);
  //   workgroup_specialized  one kernel, comm_blocks blocks scatter, compute_blocks compute;
  //   fused_sequential       one kernel, each block scatters every tile right after computing it.
  // Throws Error(invalid_argument) on a zero shape, bad options or a pattern/direction that does
  // not apply (bulk_synchronous with push or pull), Error(transport) when pull is asked for and a
  // peer is not mapped, Error(out_of_memory) when the heap cannot hold the workspace.
  GemmAs(Runtime& rt, std::size_t m, std::size_t n_local, std::size_t k, GemmDtype dtype,
         const GemmAsOptions& options = {});
  GemmAs(GemmAs&&) noexcept;
  GemmAs& operator=(GemmAs&&) noexcept;
  ~GemmAs();  // frees the workspace collectively (destroy in the same order everywhere)

  // Enqueues one call on `stream` (stream-ordered, like a kernel): a is m x k (the same on every
  // PE in tensor parallelism, though nothing requires it), b this PE's k x n_local, c (any memory,
  // m x n_local * n_pes fp32, dense row-major) receives every PE's block. Once the stream has run
  // it, a and b may be overwritten and c holds the result; no barrier is needed between calls.
  // Every PE makes the same calls in the same order. Throws Error(invalid_argument) on a null
  // pointer or a dtype other than the one constructed with; producer_consumer on a native GPU
  // stream throws Error(backend) (Stream::wait_for is host-only for now).
  void run(Stream& stream, const float* a, const float* b, float* c);
  void run(Stream& stream, const device::bf16* a, const device::bf16* b, float* c);

  // The pattern `automatic` resolved to (never automatic).
  OverlapPattern pattern() const;
  // The direction chosen (push or pull; automatic for bulk_synchronous, whose collective picks).
  CommDirection direction() const;

  std::size_t m() const;
  std::size_t n_local() const;
  std::size_t k() const;
  GemmDtype dtype() const;

 private:
  struct State;
  template <class T>
  void run_typed(Stream& stream, const T* a, const T* b, float* c);
  std::unique_ptr<State> state_;
};

}  // namespace tessera::ops
