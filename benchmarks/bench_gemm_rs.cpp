// tessera-bench gemm_rs: C[M/P, N] = reduce_scatter(A[M, K/P] x B[K/P, N]) on every PE, for
// global shapes MxNxK (--shapes), on the fused GEMM driver (fused_gemm_bench.hpp). Variants:
// fused_push (tessera::ops::GemmRs), unfused_tessera (the GEMM into a symmetric buffer, a device
// barrier, each PE summing its rows from every PE's mapped heap, a barrier), gemm_only (the GEMM
// alone).
//   limit: the GEMM alone on the same shape (M x N x K/P per PE): the host BLAS's sgemm, one
//          single-threaded call per compute block on a stripe of rows (gemm_grid.hpp);
//   peer:  the same BLAS GEMM, then MPI_Reduce_scatter_block (what a user would write).
#include <string>
#include <vector>

#include "fused_gemm_bench.hpp"
#include "tessera/device/device.hpp"
#include "tessera/ops/gemm_rs.hpp"
#include "tessera/stream_rma.hpp"

namespace tessera::bench {
namespace {

namespace td = tessera::device;

// This op's operand values.
std::vector<float> operand(std::size_t count, int pe) { return filled(count, pe, 5, 29); }

// c (m_local x n) = sum over PEs of their partial's rows [my_pe * m_local, + m_local), read
// through the mapped heaps; rows dealt over the grid's blocks.
struct SumRowsKernel {
  void operator()(td::Block blk, td::Context ctx, float* partial, float* c, std::size_t m_local,
                  std::size_t n) const {
    for (std::size_t r = static_cast<std::size_t>(blk.block_id()); r < m_local;
         r += static_cast<std::size_t>(blk.grid_size())) {
      float* out = c + r * n;
      const std::size_t offset = (static_cast<std::size_t>(ctx.my_pe) * m_local + r) * n;
      for (std::size_t j = 0; j < n; ++j) out[j] = 0.0f;
      for (int pe = 0; pe < ctx.n_pes; ++pe) {
        const float* in = ctx.ptr(partial, pe) + offset;
        for (std::size_t j = 0; j < n; ++j) out[j] += in[j];
      }
    }
  }
};

}  // namespace

void gemm_rs_shape(FusedGemmShapeRun& run) {
  Runtime& rt = run.rt();
  const int n_pes = rt.n_pes();
  const GemmShape& s = run.shape();
  const std::size_t m_local = s.m / static_cast<std::size_t>(n_pes),
                    k_local = s.k / static_cast<std::size_t>(n_pes), n = s.n;
  run.set_bytes(m_local * n * sizeof(float));  // the rows of C each PE keeps
  const int blocks = run.blocks(), me = rt.pe();
  const td::Context ctx = rt.device_context();
  bool all_mapped = true;
  for (int pe = 0; pe < n_pes; ++pe) all_mapped = all_mapped && ctx.is_mapped(pe);
  BenchEnv& env = run.env();
  const std::vector<float> a = operand(s.m * k_local, me), b = operand(k_local * n, me + 11);
  std::vector<float> c(m_local * n, 0.0f);
  auto partial = rt.alloc<float>(s.m * n);  // symmetric: unfused_tessera reads peers' rows
  const td::Tile<float> partial_tile(partial.get(), s.m, n);
  const td::Tile<const float> a_tile(a.data(), s.m, k_local), b_tile(b.data(), k_local, n);
  auto gemm = [&] { gemm_grid<float>(env.stream, blocks, partial_tile, a_tile, b_tile); };
  {
    ops::GemmRsOptions options;
    options.compute_blocks = blocks;
    ops::GemmRs op(rt, s.m, n, k_local, ops::GemmDtype::f32, options);
    run.time("fused_push", [&] {
      op.run(env.stream, a.data(), b.data(), c.data());
      env.stream.synchronize();
    });
  }
  if (all_mapped) {
    run.time("unfused_tessera", [&] {
      gemm();
      barrier_on_stream(env.stream, ctx);  // every partial is complete
      launch(env.stream, blocks, SumRowsKernel{}, ctx, partial.get(), c.data(), m_local, n);
      barrier_on_stream(env.stream, ctx);  // nobody reads my partial any more
      env.stream.synchronize();
    });
  }
  run.limit(gemm);
  run.finish(peer::gemm_then_reduce_scatter(me, n_pes, gemm, partial.get(), c.data(), m_local * n,
                                            FusedGemmShapeRun::kWarmup, run.iters()));
}

}  // namespace tessera::bench
