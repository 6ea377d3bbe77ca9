// gemm_rs: C_shard[M/P, N] = reduce_scatter(A[M, K_local] x B[K_local, N]). Every PE holds its
// K_local columns of A and rows of B; the partial products are summed across PEs while they are
// computed, and each PE keeps its M/P rows of the sum. Each PE checks its rows against a naive
// double-precision sum of every PE's partial product and prints the time of one call.
//
//   mpirun -np 4 --oversubscribe ./gemm_rs [M N K_local]       (default 512 256 128)
#include <cstdio>
#include <vector>

#include "fused_gemm_example.hpp"
#include "tessera/ops/gemm_rs.hpp"
#include "tessera/tessera.hpp"

namespace {

// PE pe's A and B.
constexpr example::Operand kA{7, 13, 3, 17}, kB{5, 3, 11, 19};

bool run(tessera::Runtime& rt, tessera::ops::GemmRs& op, example::Shape shape) {
  const int me = rt.pe(), n_pes = rt.n_pes();
  const std::size_t m = shape.m, n = shape.n, k_local = shape.k, m_local = shape.m_per_pe(n_pes);
  const std::vector<float> a = kA.rows_of(me, 0, m, k_local), b = kB.rows_of(me, 0, k_local, n);
  std::vector<float> c(m_local * n);

  const double ms =
      example::warm_time_ms(rt, [&] { op.run(rt.stream(), a.data(), b.data(), c.data()); });

  // Reference: my rows of the sum over PEs of A_pe x B_pe, in double.
  std::vector<double> want(m_local * n, 0.0);
  for (std::size_t i = 0; i < m_local; ++i)
    for (int pe = 0; pe < n_pes; ++pe)
      for (std::size_t p = 0; p < k_local; ++p) {
        const double av = kA(pe, static_cast<std::size_t>(me) * m_local + i, p);
        for (std::size_t j = 0; j < n; ++j) want[i * n + j] += av * kB(pe, p, j);
      }
  const double rel = example::relative_error(want, c.data());
  const bool ok = rel <= example::kTolerance;
  std::printf(
      "PE %d of %d: gemm_rs C[%zu x %zu] = reduce_scatter(A[%zu x %zu] x B[%zu x %zu]) "
      "in %.2f ms, max relative error %.1e: %s\n",
      me, n_pes, m_local, n, m, k_local, k_local, n, ms, rel, ok ? "verified" : "WRONG");
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  return example::run_op<tessera::ops::GemmRs>("gemm_rs", argc, argv, {512, 256, 128}, run);
}
