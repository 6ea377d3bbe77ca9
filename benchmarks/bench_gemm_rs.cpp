// tessera-bench gemm_rs: C[M/P, N] = reduce_scatter(A[M, K/P] x B[K/P, N]) on every PE, for
// global shapes MxNxK (--shapes). Variants: fused_push (tessera::ops::GemmRs), unfused_tessera
// (the GEMM into a symmetric buffer, a device barrier, each PE summing its rows from every PE's
// mapped heap, a barrier), gemm_only (the GEMM alone).
//   limit: the GEMM alone on the same shape (M x N x K/P per PE): the host BLAS's sgemm, one
//          single-threaded call per compute block on a stripe of rows (gemm_grid.hpp);
//   peer:  the same BLAS GEMM, then MPI_Reduce_scatter_block (what a user would write).
// Each sample: all PEs leave an idle barrier, PE 0 times one call to completion.
#include <cstdint>
#include <string>
#include <vector>

#include "gemm_grid.hpp"
#include "mpi_peer.hpp"
#include "registry.hpp"
#include "tessera/device/device.hpp"
#include "tessera/ops/gemm_rs.hpp"
#include "tessera/stream_rma.hpp"

namespace tessera::bench {
namespace {

namespace td = tessera::device;

constexpr int kDefaultIters = 3;
constexpr int kBlocks = 2;

std::vector<GemmShape> default_shapes() {
  return {{1024, 1024, 1024}, {2048, 2048, 2048}, {8192, 2048, 256}};
}

std::vector<float> filled(std::size_t count, int pe) {
  std::vector<float> v(count);
  for (std::size_t i = 0; i < count; ++i) {
    v[i] = static_cast<float>((i * 5 + static_cast<std::size_t>(pe) * 3) % 29) / 29.0f - 0.5f;
  }
  return v;
}

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

void run_gemm_rs(BenchEnv& env) {
  Runtime& rt = env.rt;
  const int n_pes = rt.n_pes(), me = rt.pe();
  const std::vector<GemmShape> shapes =
      env.options.shapes.empty() ? default_shapes() : env.options.shapes;
  const int iters = env.options.iters > 0 ? env.options.iters : kDefaultIters;
  const int warmup = 1;
  const int blocks = env.options.blocks.empty() ? kBlocks : env.options.blocks[0];
  const td::Context ctx = rt.device_context();
  bool all_mapped = true;
  for (int pe = 0; pe < n_pes; ++pe) all_mapped = all_mapped && ctx.is_mapped(pe);
  if (env.report) {
    env.report->note("gemm_rs: " + std::to_string(n_pes) + " PEs, fp32, global MxNxK, each PE " +
                     "K/P columns of A and rows of B; " + std::to_string(iters) +
                     " timed calls after " + std::to_string(warmup) + " warm-up; median");
    env.report->note("limit = the BLAS GEMM alone (M x N x K/P), one sgemm per compute block: " +
                     device::host_blas::info().name);
    env.report->note("peer  = the same BLAS GEMM + MPI_Reduce_scatter_block");
  }
  for (const GemmShape& s : shapes) {
    const auto p = static_cast<std::size_t>(n_pes);
    if (s.m % p != 0 || s.k % p != 0) {
      throw Error(ErrorCode::invalid_argument, me,
                  "tessera-bench gemm_rs: shape " + shape_name(s.m, s.n, s.k) +
                      ": M and K must be multiples of the number of PEs (" + std::to_string(n_pes) +
                      ")");
    }
    const std::size_t m_local = s.m / p, k_local = s.k / p, n = s.n;
    const std::vector<float> a = filled(s.m * k_local, me), b = filled(k_local * n, me + 11);
    std::vector<float> c(m_local * n, 0.0f);
    auto partial = rt.alloc<float>(s.m * n);  // symmetric: unfused_tessera reads peers' rows
    const td::Tile<float> partial_tile(partial.get(), s.m, n);
    const td::Tile<const float> a_tile(a.data(), s.m, k_local), b_tile(b.data(), k_local, n);
    auto gemm = [&] { gemm_grid<float>(env.stream, blocks, partial_tile, a_tile, b_tile); };

    std::vector<Row> rows;
    auto add_row = [&](const std::string& variant, const std::vector<double>& samples) {
      Row row;
      row.bench = "gemm_rs";
      row.variant = variant;
      row.pes = n_pes;
      row.bytes = m_local * n * sizeof(float);
      row.iters = iters;
      if (me == 0) row.time_us = median(samples);
      row.extra = {{"m", static_cast<std::int64_t>(s.m)},
                   {"n", static_cast<std::int64_t>(s.n)},
                   {"k", static_cast<std::int64_t>(s.k)},
                   {"blocks", std::int64_t{blocks}}};
      rows.push_back(row);
    };

    {
      ops::GemmRsOptions options;
      options.compute_blocks = blocks;
      ops::GemmRs op(rt, s.m, n, k_local, ops::GemmDtype::f32, options);
      add_row("fused_push", time_step(env, warmup, iters, [&] {
                op.run(env.stream, a.data(), b.data(), c.data());
                env.stream.synchronize();
              }));
    }
    if (all_mapped) {
      add_row("unfused_tessera", time_step(env, warmup, iters, [&] {
                gemm();
                barrier_on_stream(env.stream, ctx);  // every partial is complete
                launch(env.stream, blocks, SumRowsKernel{}, ctx, partial.get(), c.data(), m_local,
                       n);
                barrier_on_stream(env.stream, ctx);  // nobody reads my partial any more
                env.stream.synchronize();
              }));
    }
    const std::vector<double> gemm_only = time_step(env, warmup, iters, gemm);
    add_row("gemm_only", gemm_only);
    const peer::PeerTimes peer_times = peer::gemm_then_reduce_scatter(
        me, n_pes, gemm, partial.get(), c.data(), m_local * n, warmup, iters);
    for (Row& row : rows) {
      if (me == 0) row.limit_time_us = median(gemm_only);
      if (!peer_times.us.empty()) row.peer_time_us = median(peer_times.us);
      row.peer_note = peer_times.unavailable;
      if (env.report) env.report->add(row);
    }
    env.idle.arrive_and_wait();
  }
}

}  // namespace tessera::bench
