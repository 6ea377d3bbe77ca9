// ag_gemm (push and pull) and gemm_rs as real processes, one per PE (run under mpirun): 10 calls
// of each with fresh data and no barrier between them, checked against the double reference.
// Exits 0 when every PE verified every call.
#include <cstdio>
#include <exception>
#include <vector>

#include "gemm_ops_reference.hpp"
#include "tessera/ops/ag_gemm.hpp"
#include "tessera/ops/gemm_rs.hpp"
#include "tessera/tessera.hpp"

namespace {

using namespace tessera;
using namespace tessera::gemm_test;

constexpr int kCalls = 10;

bool check_ag_gemm(Runtime& rt, ops::AgGemmVariant variant) {
  const int me = rt.pe(), n = rt.n_pes();
  const std::size_t m_local = 45, n_local = 70, k = 33, m = m_local * static_cast<std::size_t>(n);
  ops::AgGemmOptions options;
  options.variant = variant;
  options.tile_m = 32;
  options.tile_n = 48;
  options.chunk_rows = 16;
  ops::AgGemm op(rt, m, n_local, k, ops::GemmDtype::f32, options);
  std::vector<float> c(m * n_local);
  bool ok = true;
  for (int call = 0; call < kCalls; ++call) {
    std::vector<float> a_global;
    for (int q = 0; q < n; ++q) {
      const auto shard = random_matrix(m_local, k, seed(q, call, 0), false);
      a_global.insert(a_global.end(), shard.begin(), shard.end());
    }
    const auto b = random_matrix(k, n_local, seed(me, call, 1), false);
    op.run(rt.stream(), a_global.data() + static_cast<std::size_t>(me) * m_local * k, b.data(),
           c.data());
    rt.stream().synchronize();
    std::vector<double> want(m * n_local, 0.0);
    reference_gemm_add(want, a_global.data(), b.data(), m, n_local, k);
    const double err = relative_error(c.data(), want);
    if (err > 1e-5) {
      std::fprintf(stderr, "PE %d: ag_gemm %s call %d: relative error %g > 1e-5\n", me,
                   ops::to_string(op.variant()), call, err);
      ok = false;
    }
  }
  return ok;
}

bool check_gemm_rs(Runtime& rt) {
  const int me = rt.pe(), n_pes = rt.n_pes();
  const std::size_t m_local = 29, n = 61, k_local = 27,
                    m = m_local * static_cast<std::size_t>(n_pes);
  ops::GemmRsOptions options;
  options.tile_m = 16;
  options.tile_n = 32;
  ops::GemmRs op(rt, m, n, k_local, ops::GemmDtype::f32, options);
  std::vector<float> c(m_local * n);
  bool ok = true;
  for (int call = 0; call < kCalls; ++call) {
    std::vector<double> want(m_local * n, 0.0);
    std::vector<float> my_a, my_b;
    for (int p = 0; p < n_pes; ++p) {
      auto a = random_matrix(m, k_local, seed(p, call, 2), false);
      auto b = random_matrix(k_local, n, seed(p, call, 3), false);
      reference_gemm_add(want, a.data() + static_cast<std::size_t>(me) * m_local * k_local,
                         b.data(), m_local, n, k_local);
      if (p == me) {
        my_a = std::move(a);
        my_b = std::move(b);
      }
    }
    op.run(rt.stream(), my_a.data(), my_b.data(), c.data());
    rt.stream().synchronize();
    const double err = relative_error(c.data(), want);
    if (err > 1e-5) {
      std::fprintf(stderr, "PE %d: gemm_rs call %d: relative error %g > 1e-5\n", me, call, err);
      ok = false;
    }
  }
  return ok;
}

}  // namespace

int main() {
  try {
    auto rt = Runtime::init(Options::from_env());
    bool ok = check_ag_gemm(rt, ops::AgGemmVariant::push);
    ok = check_ag_gemm(rt, ops::AgGemmVariant::automatic) && ok;
    ok = check_gemm_rs(rt) && ok;
    std::printf("PE %d of %d: ag_gemm push/automatic and gemm_rs, %d calls each: %s\n", rt.pe(),
                rt.n_pes(), kCalls, ok ? "verified" : "WRONG");
    rt.finalize();
    return ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gemm_ops_proc: %s\n", e.what());
    return 1;
  }
}
