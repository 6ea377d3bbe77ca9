// ag_gemm: C[M, N_local] = allgather(A_shard[M/P, K]) x B[K, N_local], the flagship fused op.
// Every PE holds M/P rows of A and its own N_local columns of B; the op gathers A while it
// multiplies. Each PE checks its C against a naive double-precision GEMM of the gathered A and
// prints the time of one call.
//
//   mpirun -np 4 --oversubscribe ./ag_gemm [M N_local K]       (default 512 128 256)
//   tessera-run -np 4 ./ag_gemm
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <random>
#include <vector>

#include "tessera/ops/ag_gemm.hpp"
#include "tessera/tessera.hpp"

namespace {

// A's rows [row0, row0 + rows) and B's columns of PE `pe`: values every PE can regenerate.
float a_value(std::size_t row, std::size_t col) {
  return static_cast<float>((row * 7 + col * 13) % 17) / 17.0f - 0.5f;
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
    const std::size_t n_local = argc > 2 ? std::strtoul(argv[2], nullptr, 10) : 128;
    const std::size_t k = argc > 3 ? std::strtoul(argv[3], nullptr, 10) : 256;

    // Throws a clear Error on an M that the PEs do not divide.
    tessera::ops::AgGemm op(rt, m, n_local, k, tessera::ops::GemmDtype::f32);
    const std::size_t m_local = m / static_cast<std::size_t>(n_pes);
    std::vector<float> a_shard(m_local * k), b(k * n_local), c(m * n_local);
    for (std::size_t i = 0; i < m_local; ++i)
      for (std::size_t p = 0; p < k; ++p)
        a_shard[i * k + p] = a_value(static_cast<std::size_t>(me) * m_local + i, p);
    for (std::size_t p = 0; p < k; ++p)
      for (std::size_t j = 0; j < n_local; ++j) b[p * n_local + j] = b_value(me, p, j);

    op.run(rt.stream(), a_shard.data(), b.data(), c.data());  // warm-up
    rt.stream().synchronize();
    const auto t0 = std::chrono::steady_clock::now();
    op.run(rt.stream(), a_shard.data(), b.data(), c.data());
    rt.stream().synchronize();
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();

    // Reference: the gathered A (every PE's rows) times my B, in double.
    double max_err = 0, max_ref = 0;
    std::vector<double> row(n_local);
    for (std::size_t i = 0; i < m; ++i) {
      std::fill(row.begin(), row.end(), 0.0);
      for (std::size_t p = 0; p < k; ++p) {
        const double av = a_value(i, p);
        for (std::size_t j = 0; j < n_local; ++j) row[j] += av * b[p * n_local + j];
      }
      for (std::size_t j = 0; j < n_local; ++j) {
        max_err = std::max(max_err, std::abs(row[j] - c[i * n_local + j]));
        max_ref = std::max(max_ref, std::abs(row[j]));
      }
    }
    const double rel = max_ref == 0 ? max_err : max_err / max_ref;
    const bool ok = rel <= 1e-5;
    std::printf(
        "PE %d of %d: ag_gemm (%s) C[%zu x %zu] = allgather(A[%zu x %zu]) x B[%zu x %zu] "
        "in %.2f ms, max relative error %.1e: %s\n",
        me, n_pes, tessera::ops::to_string(op.variant()), m, n_local, m_local, k, k, n_local, ms,
        rel, ok ? "verified" : "WRONG");
    std::fflush(stdout);
    rt.finalize();
    return ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ag_gemm: %s\n", e.what());
    return 1;
  }
}
