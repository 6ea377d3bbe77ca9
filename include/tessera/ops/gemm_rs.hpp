// tessera::ops::GemmRs: C_shard[M/P, N] = reduce_scatter(A[M, K_local] x B[K_local, N]) with the
// reduction overlapped with the GEMM (DESIGN §7), one of the fused GEMM ops (fused_gemm.hpp). The
// kernels it launches are the building blocks in <tessera/device/ops/gemm_rs.hpp> and
// <tessera/device/ops/gemm_ar.hpp> (device/), which user kernels can call themselves.
#pragma once

#include <cstddef>

#include "tessera/device/team.hpp"
#include "tessera/heap.hpp"
#include "tessera/ops/fused_gemm.hpp"
#include "tessera/runtime.hpp"

namespace tessera::ops {

// pattern automatic: resolve_overlap(OpKind::gemm_rs, ...): bulk_synchronous below the fusion
// threshold or on one PE, else producer_consumer. fused_sequential without a direction is push,
// the kernel before patterns existed (compute_blocks blocks per PE, each computes, publishes and
// sums tiles; 4 by default). bulk_synchronous runs the GEMM kernel, then ops::all_reduce of the
// partials and a copy of this PE's rows; workgroup_specialized and producer_consumer give the
// publishing and summing to comm_blocks blocks (producer_consumer: in a kernel on a stream this
// object owns).
struct GemmRsOptions : FusedGemmOptions {
  GemmRsOptions() { compute_blocks = 4; }
};

class GemmRs : public FusedGemm {
 public:
  // The workspace: n_pes partial slots of m/n_pes x n floats, so m x n floats, plus n_pes * tiles
  // flags. m is the global row count and must be a multiple of n_pes (else invalid_argument).
  GemmRs(Runtime& rt, std::size_t m, std::size_t n, std::size_t k_local, GemmDtype dtype,
         const GemmRsOptions& options = {});

  // run(stream, a, b, c): a is this PE's m x k_local, b its k_local x n, c receives this PE's
  // m/n_pes x n rows of the sum over all PEs (all dense, row-major).

  std::size_t n() const { return cols(); }
  std::size_t k_local() const { return inner(); }
};

}  // namespace tessera::ops
