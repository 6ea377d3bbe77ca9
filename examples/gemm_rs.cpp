// gemm_rs: C_shard[M/P, N] = reduce_scatter(A[M, K_local] x B[K_local, N]). Every PE holds its
// K_local columns of A and rows of B; the partial products are summed across PEs while they are
// computed, and each PE keeps its M/P rows of the sum. Each PE checks its rows against a naive
// double-precision sum of every PE's partial product and prints the time of one call.
//
//   mpirun -np 4 --oversubscribe ./gemm_rs [M N K_local]       (default 512 256 128)
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <vector>

#include "tessera/ops/gemm_rs.hpp"
#include "tessera/tessera.hpp"

namespace {

float a_value(int pe, std::size_t row, std::size_t col) {
  return static_cast<float>((row * 7 + col * 13 + static_cast<std::size_t>(pe) * 3) % 17) / 17.0f -
         0.5f;
}
float b_value(int pe, std::size_t row, std::size_t col) {
  return static_cast<float>((row * 5 + col * 3 + static_cast<std::size_t>(pe) * 11) % 19) / 19.0f -
         0.5f;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    auto rt = tessera::Runtime::init(tessera::Options::from_env());
    const int me = rt.pe(), n_pes = rt.n_pes();
    const std::size_t m = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 512;
    const std::size_t n = argc > 2 ? std::strtoul(argv[2], nullptr, 10) : 256;
    const std::size_t k_local = argc > 3 ? std::strtoul(argv[3], nullptr, 10) : 128;

    tessera::ops::GemmRs op(rt, m, n, k_local, tessera::ops::GemmDtype::f32);
    const std::size_t m_local = m / static_cast<std::size_t>(n_pes);
    std::vector<float> a(m * k_local), b(k_local * n), c(m_local * n);
    for (std::size_t i = 0; i < m; ++i)
      for (std::size_t p = 0; p < k_local; ++p) a[i * k_local + p] = a_value(me, i, p);
    for (std::size_t p = 0; p < k_local; ++p)
      for (std::size_t j = 0; j < n; ++j) b[p * n + j] = b_value(me, p, j);

    op.run(rt.stream(), a.data(), b.data(), c.data());  // warm-up
    rt.stream().synchronize();
    const auto t0 = std::chrono::steady_clock::now();
    op.run(rt.stream(), a.data(), b.data(), c.data());
    rt.stream().synchronize();
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();

    double max_err = 0, max_ref = 0;
    std::vector<double> row(n);
    for (std::size_t i = 0; i < m_local; ++i) {
      const std::size_t gi = static_cast<std::size_t>(me) * m_local + i;
      std::fill(row.begin(), row.end(), 0.0);
      for (int pe = 0; pe < n_pes; ++pe)
        for (std::size_t p = 0; p < k_local; ++p) {
          const double av = a_value(pe, gi, p);
          for (std::size_t j = 0; j < n; ++j) row[j] += av * b_value(pe, p, j);
        }
      for (std::size_t j = 0; j < n; ++j) {
        max_err = std::max(max_err, std::abs(row[j] - c[i * n + j]));
        max_ref = std::max(max_ref, std::abs(row[j]));
      }
    }
    const double rel = max_ref == 0 ? max_err : max_err / max_ref;
    const bool ok = rel <= 1e-5;
    std::printf(
        "PE %d of %d: gemm_rs C[%zu x %zu] = reduce_scatter(A[%zu x %zu] x B[%zu x %zu]) "
        "in %.2f ms, max relative error %.1e: %s\n",
        me, n_pes, m_local, n, m, k_local, k_local, n, ms, rel, ok ? "verified" : "WRONG");
    std::fflush(stdout);
    rt.finalize();
    return ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gemm_rs: %s\n", e.what());
    return 1;
  }
}
