// tessera::ops::GemmAs: C[M, N_local * P] where PE p computes its column block
// C[:, p * N_local, + N_local] = A[M, K] x B_local[K, N_local] and all-scatters it, so every PE
// holds all of C (tensor parallelism's column-parallel linear layer followed by a gather), one of
// the fused GEMM ops (fused_gemm.hpp), run in any overlap pattern (overlap.hpp). The kernels it
// launches are made of the building blocks in <tessera/device/ops/gemm_as.hpp> (device/), which
// user kernels can call themselves.
#pragma once

#include <cstddef>

#include "tessera/ops/fused_gemm.hpp"
#include "tessera/runtime.hpp"

namespace tessera::ops {

using GemmAsOptions = FusedGemmOptions;

class GemmAs : public FusedGemm {
 public:
  // The workspace: the gathered blocks, n_pes x m x n_local floats, plus a flag per tile and PE.
  // c itself need not be in the heap in any pattern: each PE computes its block into its slot of
  // the workspace, peers' blocks land in (push) or are read from (pull) the workspace, and every
  // block is copied into c as it arrives. The pattern runs as:
  //   bulk_synchronous       the GEMM kernel into this PE's slot, then ops::all_gather in place,
  //                          then the columns into c;
  //   producer_consumer      the GEMM kernel on the caller's stream and the scatter kernel on a
  //                          stream this object owns, tiles handed over by flags;
  //   workgroup_specialized  one kernel, comm_blocks blocks scatter, compute_blocks compute;
  //   fused_sequential       one kernel, each block scatters every tile right after computing it.
  // Errors as FusedGemm says; a direction with bulk_synchronous is invalid_argument.
  GemmAs(Runtime& rt, std::size_t m, std::size_t n_local, std::size_t k, GemmDtype dtype,
         const GemmAsOptions& options = {});

  // run(stream, a, b, c): a is m x k (the same on every PE in tensor parallelism, though nothing
  // requires it), b this PE's k x n_local, c (m x n_local * n_pes, dense row-major) receives
  // every PE's block.

  std::size_t n_local() const { return cols(); }
  std::size_t k() const { return inner(); }
};

}  // namespace tessera::ops
