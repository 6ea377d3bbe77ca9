// tessera-bench ag_gemm: C[M, N/P] = allgather(A[M/P, K]) x B[K, N/P] on every PE, for global
// shapes MxNxK (--shapes), on the fused GEMM driver (fused_gemm_bench.hpp). Variants: fused_push
// and fused_pull (tessera::ops::AgGemm, default tiles; _t256x512: 256 x 512 tiles), and
// unfused_tessera (tessera::ops::all_gather, then the GEMM), gemm_only (the GEMM alone).
//   limit: the GEMM alone on the same shape (every PE multiplying an already gathered A): the
//          host BLAS's sgemm, one single-threaded call per compute block on a stripe of rows
//          (gemm_grid.hpp), as many threads as the fused op's compute blocks;
//   peer:  MPI_Allgather, then the same BLAS GEMM (what a user would write).
#include <algorithm>
#include <string>
#include <vector>

#include "fused_gemm_bench.hpp"
#include "tessera/ops/ag_gemm.hpp"
#include "tessera/ops/all_gather.hpp"

namespace tessera::bench {
namespace {

namespace td = tessera::device;

// This op's operand values.
std::vector<float> operand(std::size_t count, int pe) { return filled(count, pe, 7, 23); }

}  // namespace

void ag_gemm_shape(FusedGemmShapeRun& run) {
  Runtime& rt = run.rt();
  const GemmShape& s = run.shape();
  const auto p = static_cast<std::size_t>(rt.n_pes());
  const std::size_t m_local = s.m / p, n_local = s.n / p, k = s.k;
  run.set_bytes(m_local * k * sizeof(float));  // the shard each PE gathers out
  const int blocks = run.blocks(), me = rt.pe();
  BenchEnv& env = run.env();
  auto a_shard = rt.alloc<float>(m_local * k);  // symmetric: pull reads it in place
  auto gathered = rt.alloc<float>(s.m * k);     // all_gather's receive buffer
  {
    const std::vector<float> a = operand(m_local * k, me);
    std::copy(a.begin(), a.end(), a_shard.get());
  }
  const std::vector<float> b = operand(k * n_local, me + 17);
  std::vector<float> c(s.m * n_local, 0.0f), a_full(s.m * k, 0.0f);
  const td::Tile<float> c_tile(c.data(), s.m, n_local);
  const td::Tile<const float> b_tile(b.data(), k, n_local);

  // The default tiles (ops::kHostGemmTile, 256 x 512, on the host backend; kGpuGemmTile,
  // 64 x 256, on a GPU), then 256 x 512 given explicitly: with a BLAS per tile, each call packs
  // its A and B panels again, so larger tiles spend less of the GEMM packing (issue 19).
  for (const bool big : {false, true}) {
    for (const ops::AgGemmVariant variant : {ops::AgGemmVariant::push, ops::AgGemmVariant::pull}) {
      ops::AgGemmOptions options;
      options.variant = variant;
      options.compute_blocks = blocks;
      if (big) {
        options.tile_m = 256;
        options.tile_n = 512;
      }
      ops::AgGemm op(rt, s.m, n_local, k, ops::GemmDtype::f32, options);
      const std::string name = variant == ops::AgGemmVariant::push ? "fused_push" : "fused_pull";
      run.time(big ? name + "_t256x512" : name, [&] {
        op.run(env.stream, a_shard.get(), b.data(), c.data());
        env.stream.synchronize();
      });
    }
  }
  run.time("unfused_tessera", [&] {
    ops::all_gather(rt, env.stream, a_shard.get(), gathered.get(), m_local * k * sizeof(float));
    gemm_grid<float>(env.stream, blocks, c_tile, td::Tile<const float>(gathered.get(), s.m, k),
                     b_tile);
  });
  const auto gemm = [&] {
    gemm_grid<float>(env.stream, blocks, c_tile, td::Tile<const float>(a_full.data(), s.m, k),
                     b_tile);
  };
  run.limit(gemm);
  run.finish(peer::allgather_then_gemm(me, rt.n_pes(), a_shard.get(), a_full.data(),
                                       m_local * k * sizeof(float), gemm,
                                       FusedGemmShapeRun::kWarmup, run.iters()));
}

}  // namespace tessera::bench
