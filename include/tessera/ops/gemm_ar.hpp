// tessera::ops::GemmAr: C[M, N] = all_reduce over PEs of A_local[M, K_local] x B_local[K_local, N]
// (tensor parallelism's row-parallel linear layer), one of the fused GEMM ops (fused_gemm.hpp),
// run in any overlap pattern (overlap.hpp). The kernels it launches are made of the building
// blocks in <tessera/device/ops/gemm_ar.hpp> (device/), which user kernels can call themselves.
#pragma once

#include <cstddef>

#include "tessera/ops/fused_gemm.hpp"
#include "tessera/runtime.hpp"

namespace tessera::ops {

using GemmArOptions = FusedGemmOptions;

class GemmAr : public FusedGemm {
 public:
  // The workspace: about 3 x m x n floats plus a flag per tile and PE; bulk_synchronous: m x n
  // floats and the world team of the fused ops. The pattern runs as:
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
  // it). Errors as FusedGemm says; a direction with bulk_synchronous is invalid_argument.
  GemmAr(Runtime& rt, std::size_t m, std::size_t n, std::size_t k_local, GemmDtype dtype,
         const GemmArOptions& options = {});

  // run(stream, a, b, c): a is this PE's m x k_local, b its k_local x n, c (m x n) receives the
  // sum over all PEs (dense, row-major).

  std::size_t n() const { return cols(); }
  std::size_t k_local() const { return inner(); }
};

}  // namespace tessera::ops
