// The fused GEMM subcommands' shared driver (fused_gemm_bench.hpp).
#include "fused_gemm_bench.hpp"

#include "tessera/device/ops/impl/host_blas.hpp"

namespace tessera::bench {

std::vector<float> filled(std::size_t count, int pe, std::size_t step, std::size_t period) {
  std::vector<float> v(count);
  for (std::size_t i = 0; i < count; ++i) {
    v[i] = static_cast<float>((i * step + static_cast<std::size_t>(pe) * 3) % period) /
               static_cast<float>(period) -
           0.5f;
  }
  return v;
}

void FusedGemmShapeRun::add(const std::string& variant, const std::vector<double>& samples) {
  Row row;
  row.bench = bench_;
  row.variant = variant;
  row.pes = env_.rt.n_pes();
  row.bytes = row_bytes_;
  row.iters = iters_;
  if (env_.rt.pe() == 0) row.time_us = median(samples);
  row.extra = {{"m", static_cast<std::int64_t>(shape_.m)},
               {"n", static_cast<std::int64_t>(shape_.n)},
               {"k", static_cast<std::int64_t>(shape_.k)},
               {"blocks", std::int64_t{blocks_}}};
  rows_.push_back(row);
}

void FusedGemmShapeRun::finish(const peer::PeerTimes& peer_times) {
  for (Row& row : rows_) {
    if (env_.rt.pe() == 0) row.limit_time_us = median(limit_);
    if (!peer_times.us.empty()) row.peer_time_us = median(peer_times.us);
    row.peer_note = peer_times.unavailable;
    if (env_.report) env_.report->add(row);
  }
  rows_.clear();
}

namespace {

// The subcommand: --iters (default 3) timed calls after one warm-up per variant, --blocks[0]
// (default 2) compute blocks, --shapes.
void run_fused_gemm_bench(BenchEnv& env, const FusedGemmBench& op) {
  constexpr int kDefaultIters = 3;
  constexpr int kDefaultBlocks = 2;
  Runtime& rt = env.rt;
  const int n_pes = rt.n_pes();
  const std::vector<GemmShape> shapes = env.options.shapes.empty() ? op.shapes : env.options.shapes;
  const int iters = env.options.iters > 0 ? env.options.iters : kDefaultIters;
  const int blocks = env.options.blocks.empty() ? kDefaultBlocks : env.options.blocks[0];
  const std::string name = op.name;
  if (env.report) {
    env.report->note(name + ": " + std::to_string(n_pes) + " PEs, fp32, global MxNxK, each PE " +
                     std::string(op.layout) + "; " + std::to_string(iters) + " timed calls after " +
                     std::to_string(FusedGemmShapeRun::kWarmup) + " warm-up; median");
    env.report->note("limit = " + std::string(op.limit_note) +
                     ", one sgemm per compute block: " + device::host_blas::info().name);
    env.report->note("peer  = " + std::string(op.peer_note));
  }
  const auto p = static_cast<std::size_t>(n_pes);
  const bool by_n = op.split == GemmSplit::n;
  for (const GemmShape& s : shapes) {
    if (s.m % p != 0 || (by_n ? s.n : s.k) % p != 0) {
      throw Error(ErrorCode::invalid_argument, rt.pe(),
                  "tessera-bench " + name + ": shape " + shape_name(s.m, s.n, s.k) + ": " +
                      (by_n ? "M and N" : "M and K") + " must be multiples of the number of PEs (" +
                      std::to_string(n_pes) + ")");
    }
    FusedGemmShapeRun run(env, op.name, s, blocks, iters);
    op.run_shape(run);
    env.idle.arrive_and_wait();
  }
}

// The subcommands, a row each: name, default shapes, split, layout, limit, peer, one shape.
// clang-format off
const FusedGemmBench kAgGemm{"ag_gemm", {{1024, 1024, 1024}, {2048, 2048, 2048}, {8192, 256, 2048}},
    GemmSplit::n, "M/P rows of A and N/P columns of B", "the BLAS GEMM alone (A already gathered)",
    "MPI_Allgather + the same BLAS GEMM", ag_gemm_shape};
const FusedGemmBench kGemmRs{"gemm_rs", {{1024, 1024, 1024}, {2048, 2048, 2048}, {8192, 2048, 256}},
    GemmSplit::k, "K/P columns of A and rows of B", "the BLAS GEMM alone (M x N x K/P)",
    "the same BLAS GEMM + MPI_Reduce_scatter_block", gemm_rs_shape};
// clang-format on

}  // namespace

void run_ag_gemm(BenchEnv& env) { run_fused_gemm_bench(env, kAgGemm); }
void run_gemm_rs(BenchEnv& env) { run_fused_gemm_bench(env, kGemmRs); }

}  // namespace tessera::bench
