// gemm_ar: the row-parallel linear layer of tensor parallelism. Every PE holds its k_local
// columns of A (m x k_local) and the matching rows of B (k_local x n); tessera::ops::GemmAr
// computes C = sum over PEs of A_local x B_local (m x n) on every PE, in each overlap pattern.
// Each PE checks C against a double-precision reference it computes from every PE's inputs
// (which it can regenerate: they are seeded by PE and call), then prints the median time per call
// of each pattern and which one `automatic` chose.
//
//   mpirun -np 4 --oversubscribe ./gemm_ar [m n k_local]   (MPI bootstrap; default 256 256 128)
//   ./gemm_ar                                             (one PE)
#include <algorithm>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "fused_gemm_example.hpp"
#include "tessera/ops/gemm_ar.hpp"
#include "tessera/tessera.hpp"

namespace {

namespace ops = tessera::ops;

// PE pe's operand `which` of call `call`: values in [-1, 1), the same wherever it is made.
std::vector<float> operand(int pe, int call, int which, std::size_t count) {
  std::mt19937_64 gen(static_cast<std::uint64_t>(pe) * 7919 +
                      static_cast<std::uint64_t>(call) * 31 + static_cast<std::uint64_t>(which));
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(count);
  for (float& x : v) x = dist(gen);
  return v;
}

struct Run {
  const char* name;
  ops::OverlapPattern pattern;
  ops::CommDirection direction;
};

bool run(tessera::Runtime& rt, example::Shape shape) {
  const int me = rt.pe(), n_pes = rt.n_pes();
  const std::size_t m = shape.m, n = shape.n, k = shape.k;
  const int calls = 5;
  // The reference of every call: sum over PEs of A_p x B_p in double.
  std::vector<std::vector<double>> want(calls, std::vector<double>(m * n, 0.0));
  for (int call = 0; call < calls; ++call) {
    for (int p = 0; p < n_pes; ++p) {
      const auto a = operand(p, call, 0, m * k), b = operand(p, call, 1, k * n);
      for (std::size_t i = 0; i < m; ++i) {
        for (std::size_t q = 0; q < k; ++q) {
          const double av = a[i * k + q];
          for (std::size_t j = 0; j < n; ++j) want[call][i * n + j] += av * b[q * n + j];
        }
      }
    }
  }
  const Run runs[] = {
      {"automatic", ops::OverlapPattern::automatic, ops::CommDirection::automatic},
      {"bulk_synchronous", ops::OverlapPattern::bulk_synchronous, ops::CommDirection::automatic},
      {"producer_consumer push", ops::OverlapPattern::producer_consumer, ops::CommDirection::push},
      {"producer_consumer pull", ops::OverlapPattern::producer_consumer, ops::CommDirection::pull},
      {"workgroup_specialized push", ops::OverlapPattern::workgroup_specialized,
       ops::CommDirection::push},
      {"workgroup_specialized pull", ops::OverlapPattern::workgroup_specialized,
       ops::CommDirection::pull},
      {"fused_sequential push", ops::OverlapPattern::fused_sequential, ops::CommDirection::push},
      {"fused_sequential pull", ops::OverlapPattern::fused_sequential, ops::CommDirection::pull},
  };
  bool ok = true;
  std::vector<float> c(m * n);
  for (const Run& run : runs) {
    ops::GemmArOptions options;
    options.pattern = run.pattern;
    options.direction = run.direction;
    ops::GemmAr op(rt, m, n, k, ops::GemmDtype::f32, options);
    std::vector<double> times;
    double worst = 0;
    for (int call = 0; call < calls; ++call) {
      const auto a = operand(me, call, 0, m * k), b = operand(me, call, 1, k * n);
      times.push_back(1000.0 * example::time_ms(
                                   rt, [&] { op.run(rt.stream(), a.data(), b.data(), c.data()); }));
      worst = std::max(worst, example::relative_error(want[call], c.data()));
    }
    const bool good = worst <= example::kTolerance;
    ok = ok && good;
    std::sort(times.begin(), times.end());
    std::printf(
        "PE %d of %d: gemm_ar %zux%zux%zu %s (runs %s %s): median %.1f us, error %.1e, %s\n", me,
        n_pes, m, n, k, run.name, ops::to_string(op.pattern()), ops::to_string(op.direction()),
        times[times.size() / 2], worst, good ? "verified" : "WRONG");
  }
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  return example::run("gemm_ar", argc, argv, {256, 256, 128}, run);
}
