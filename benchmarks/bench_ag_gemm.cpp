// tessera-bench ag_gemm: C[M, N/P] = allgather(A[M/P, K]) x B[K, N/P] on every PE, for global
// shapes MxNxK (--shapes). Variants: fused_push and fused_pull (tessera::ops::AgGemm, default
// tiles; _t256x512: 256 x 512 tiles), and
// unfused_tessera (tessera::ops::all_gather, then the GEMM), gemm_only (the GEMM alone).
//   limit: the GEMM alone on the same shape (every PE multiplying an already gathered A): the
//          host BLAS's sgemm, one single-threaded call per compute block on a stripe of rows
//          (gemm_grid.hpp), as many threads as the fused op's compute blocks;
//   peer:  MPI_Allgather, then the same BLAS GEMM (what a user would write).
// Each sample: all PEs leave an idle barrier, PE 0 times one call to completion.
#include <cstdint>
#include <string>
#include <vector>

#include "gemm_grid.hpp"
#include "mpi_peer.hpp"
#include "registry.hpp"
#include "tessera/ops/ag_gemm.hpp"
#include "tessera/ops/all_gather.hpp"

namespace tessera::bench {
namespace {

namespace td = tessera::device;

constexpr int kDefaultIters = 3;
constexpr int kComputeBlocks = 2;

std::vector<GemmShape> default_shapes() {
  return {{1024, 1024, 1024}, {2048, 2048, 2048}, {8192, 256, 2048}};
}

std::vector<float> filled(std::size_t count, int pe) {
  std::vector<float> v(count);
  for (std::size_t i = 0; i < count; ++i) {
    v[i] = static_cast<float>((i * 7 + static_cast<std::size_t>(pe) * 3) % 23) / 23.0f - 0.5f;
  }
  return v;
}

}  // namespace

void run_ag_gemm(BenchEnv& env) {
  Runtime& rt = env.rt;
  const int n_pes = rt.n_pes(), me = rt.pe();
  const std::vector<GemmShape> shapes =
      env.options.shapes.empty() ? default_shapes() : env.options.shapes;
  const int iters = env.options.iters > 0 ? env.options.iters : kDefaultIters;
  const int warmup = 1;  // a 2048^3 call takes seconds on this machine's cores
  const int compute_blocks = env.options.blocks.empty() ? kComputeBlocks : env.options.blocks[0];
  if (env.report) {
    env.report->note("ag_gemm: " + std::to_string(n_pes) + " PEs, fp32, global MxNxK, each PE " +
                     "M/P rows of A and N/P columns of B; " + std::to_string(iters) +
                     " timed calls after " + std::to_string(warmup) + " warm-up; median");
    env.report->note("limit = the BLAS GEMM alone (A already gathered), one sgemm per compute " +
                     std::string("block: ") + td::host_blas::info().name);
    env.report->note("peer  = MPI_Allgather + the same BLAS GEMM");
  }
  for (const GemmShape& s : shapes) {
    const auto p = static_cast<std::size_t>(n_pes);
    if (s.m % p != 0 || s.n % p != 0) {
      throw Error(ErrorCode::invalid_argument, me,
                  "tessera-bench ag_gemm: shape " + shape_name(s.m, s.n, s.k) +
                      ": M and N must be multiples of the number of PEs (" + std::to_string(n_pes) +
                      ")");
    }
    const std::size_t m_local = s.m / p, n_local = s.n / p, k = s.k;
    auto a_shard = rt.alloc<float>(m_local * k);  // symmetric: pull reads it in place
    auto gathered = rt.alloc<float>(s.m * k);     // all_gather's receive buffer
    {
      const std::vector<float> a = filled(m_local * k, me);
      std::copy(a.begin(), a.end(), a_shard.get());
    }
    const std::vector<float> b = filled(k * n_local, me + 17);
    std::vector<float> c(s.m * n_local, 0.0f), a_full(s.m * k, 0.0f);
    const td::Tile<float> c_tile(c.data(), s.m, n_local);
    const td::Tile<const float> b_tile(b.data(), k, n_local);

    std::vector<Row> rows;
    auto add_row = [&](const std::string& variant, const std::vector<double>& samples) {
      Row row;
      row.bench = "ag_gemm";
      row.variant = variant;
      row.pes = n_pes;
      row.bytes = m_local * k * sizeof(float);
      row.iters = iters;
      if (me == 0) row.time_us = median(samples);
      row.extra = {{"m", static_cast<std::int64_t>(s.m)},
                   {"n", static_cast<std::int64_t>(s.n)},
                   {"k", static_cast<std::int64_t>(s.k)},
                   {"blocks", std::int64_t{compute_blocks}}};
      rows.push_back(row);
    };

    // The default tiles (ops::kHostGemmTile, 256 x 512, on the host backend; kGpuGemmTile,
    // 64 x 256, on a GPU), then 256 x 512 given explicitly: with a BLAS per tile, each call packs
    // its A and B panels again, so larger tiles spend less of the GEMM packing (issue 19).
    for (const std::size_t big : {std::size_t{0}, std::size_t{1}}) {
      for (const ops::AgGemmVariant variant :
           {ops::AgGemmVariant::push, ops::AgGemmVariant::pull}) {
        ops::AgGemmOptions options;
        options.variant = variant;
        options.compute_blocks = compute_blocks;
        if (big != 0) {
          options.tile_m = 256;
          options.tile_n = 512;
        }
        ops::AgGemm op(rt, s.m, n_local, k, ops::GemmDtype::f32, options);
        const std::string name = variant == ops::AgGemmVariant::push ? "fused_push" : "fused_pull";
        add_row(big != 0 ? name + "_t256x512" : name, time_step(env, warmup, iters, [&] {
                  op.run(env.stream, a_shard.get(), b.data(), c.data());
                  env.stream.synchronize();
                }));
      }
    }
    add_row("unfused_tessera", time_step(env, warmup, iters, [&] {
              ops::all_gather(rt, env.stream, a_shard.get(), gathered.get(),
                              m_local * k * sizeof(float));
              gemm_grid<float>(env.stream, compute_blocks, c_tile,
                               td::Tile<const float>(gathered.get(), s.m, k), b_tile);
            }));
    const std::vector<double> gemm_only = time_step(env, warmup, iters, [&] {
      gemm_grid<float>(env.stream, compute_blocks, c_tile,
                       td::Tile<const float>(a_full.data(), s.m, k), b_tile);
    });
    add_row("gemm_only", gemm_only);
    const peer::PeerTimes peer_times = peer::allgather_then_gemm(
        me, n_pes, a_shard.get(), a_full.data(), m_local * k * sizeof(float),
        [&] {
          gemm_grid<float>(env.stream, compute_blocks, c_tile,
                           td::Tile<const float>(a_full.data(), s.m, k), b_tile);
        },
        warmup, iters);
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
