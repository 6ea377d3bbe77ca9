// Reference data and checks shared by the ag_gemm / gemm_rs tests and their process test: random
// inputs every PE can regenerate for any PE (seeded by PE and call), a naive GEMM in double, and
// the error norm the tests bound: max |C - C_ref| / max |C_ref| (max-norm relative error).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

#include "tessera/device/ops/gemm_tile.hpp"
#include "tessera/device/tile.hpp"

namespace tessera::gemm_test {

// rows x cols values in [-1, 1), the same on every PE for the same seed. For bf16 runs the
// values are rounded to bf16 here, so the reference sees exactly the op's inputs.
inline std::vector<float> random_matrix(std::size_t rows, std::size_t cols, std::uint64_t seed,
                                        bool round_to_bf16) {
  std::mt19937_64 gen(seed * 0x9e3779b97f4a7c15ull + 12345);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> out(rows * cols);
  for (float& v : out) {
    v = dist(gen);
    if (round_to_bf16) v = device::ops::to_float(device::ops::to_bf16(v));
  }
  return out;
}

inline std::vector<device::bf16> to_bf16(const std::vector<float>& in) {
  std::vector<device::bf16> out(in.size());
  for (std::size_t i = 0; i < in.size(); ++i) out[i] = device::ops::to_bf16(in[i]);
  return out;
}

// c (m x n) += a (m x k) * b (k x n), in double.
inline void reference_gemm_add(std::vector<double>& c, const float* a, const float* b,
                               std::size_t m, std::size_t n, std::size_t k) {
  for (std::size_t i = 0; i < m; ++i) {
    for (std::size_t p = 0; p < k; ++p) {
      const double av = a[i * k + p];
      for (std::size_t j = 0; j < n; ++j) c[i * n + j] += av * b[p * n + j];
    }
  }
}

// max |got - want| / max |want| (0 / 0 counts as 0).
inline double relative_error(const float* got, const std::vector<double>& want) {
  double diff = 0, scale = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    diff = std::max(diff, std::abs(static_cast<double>(got[i]) - want[i]));
    scale = std::max(scale, std::abs(want[i]));
  }
  return scale == 0 ? diff : diff / scale;
}

// Seeds of the test data: PE p's operand `which` in call `call`.
inline std::uint64_t seed(int pe, int call, int which) {
  return static_cast<std::uint64_t>(pe) * 1000003ull + static_cast<std::uint64_t>(call) * 101ull +
         static_cast<std::uint64_t>(which);
}

}  // namespace tessera::gemm_test
