// ag_gemm: C[M, N_local] = allgather(A_shard[M/P, K]) x B[K, N_local], the flagship fused op.
// Every PE holds M/P rows of A and its own N_local columns of B; the op gathers A while it
// multiplies. Each PE checks its C against a naive double-precision GEMM of the gathered A and
// prints the time of one call.
//
//   mpirun -np 4 --oversubscribe ./ag_gemm [M N_local K]       (default 512 128 256)
//   tessera-run -np 4 ./ag_gemm
#include <cstdio>
#include <vector>

#include "fused_gemm_example.hpp"
#include "tessera/ops/ag_gemm.hpp"
#include "tessera/tessera.hpp"

namespace {

// A, the same on every PE, and PE pe's B.
constexpr example::Operand kA{7, 13, 0, 17}, kB{5, 3, 11, 19};

bool run(tessera::Runtime& rt, tessera::ops::AgGemm& op, example::Shape shape) {
  const int me = rt.pe(), n_pes = rt.n_pes();
  const std::size_t m = shape.m, n_local = shape.n, k = shape.k, m_local = shape.m_per_pe(n_pes);
  const std::vector<float> a_shard =
      kA.rows_of(0, static_cast<std::size_t>(me) * m_local, m_local, k);
  const std::vector<float> b = kB.rows_of(me, 0, k, n_local);
  std::vector<float> c(m * n_local);

  const double ms =
      example::warm_time_ms(rt, [&] { op.run(rt.stream(), a_shard.data(), b.data(), c.data()); });

  // Reference: the gathered A (every PE's rows) times my B, in double.
  std::vector<double> want(m * n_local, 0.0);
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t p = 0; p < k; ++p)
      for (std::size_t j = 0; j < n_local; ++j)
        want[i * n_local + j] += static_cast<double>(kA(0, i, p)) * b[p * n_local + j];
  const double rel = example::relative_error(want, c.data());
  const bool ok = rel <= example::kTolerance;
  std::printf(
      "PE %d of %d: ag_gemm (%s) C[%zu x %zu] = allgather(A[%zu x %zu]) x B[%zu x %zu] "
      "in %.2f ms, max relative error %.1e: %s\n",
      me, n_pes, tessera::ops::to_string(op.variant()), m, n_local, m_local, k, k, n_local, ms, rel,
      ok ? "verified" : "WRONG");
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  return example::run_op<tessera::ops::AgGemm>("ag_gemm", argc, argv, {512, 128, 256}, run);
}
