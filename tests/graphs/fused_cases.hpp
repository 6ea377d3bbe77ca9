// The fused GEMM ops under capture and replay (issue 34): ag_gemm, gemm_rs, gemm_ar and gemm_as,
// each in every pattern and direction, one call captured and replayed (capture_and_replay) with
// the inputs rewritten before every replay and every element of C checked against a host
// reference after it. Small integer inputs (graphs_test::value), so fp32 and bf16 results are
// exact and compared with ==. Header-only, for the gtest program and process programs alike: a
// wrong replay throws ReplayFailure.
#pragma once

#include <algorithm>
#include <cstddef>
#include <string>
#include <type_traits>
#include <vector>

#include "replay.hpp"
#include "tessera/device/ops/gemm_tile.hpp"
#include "tessera/ops/ag_gemm.hpp"
#include "tessera/ops/gemm_ar.hpp"
#include "tessera/ops/gemm_as.hpp"
#include "tessera/ops/gemm_rs.hpp"
#include "tessera/ops/overlap.hpp"
#include "tessera/tessera.hpp"

namespace tessera::graphs_test {

// One pattern and direction of a fused op (bulk_synchronous has no direction of its own).
struct FusedVariant {
  ops::OverlapPattern pattern;
  ops::CommDirection direction;
};

inline constexpr FusedVariant kFusedVariants[] = {
    {ops::OverlapPattern::bulk_synchronous, ops::CommDirection::automatic},
    {ops::OverlapPattern::producer_consumer, ops::CommDirection::push},
    {ops::OverlapPattern::producer_consumer, ops::CommDirection::pull},
    {ops::OverlapPattern::workgroup_specialized, ops::CommDirection::push},
    {ops::OverlapPattern::workgroup_specialized, ops::CommDirection::pull},
    {ops::OverlapPattern::fused_sequential, ops::CommDirection::push},
    {ops::OverlapPattern::fused_sequential, ops::CommDirection::pull},
};

inline std::string to_string(const FusedVariant& v) {
  return std::string(ops::to_string(v.pattern)) + "_" + ops::to_string(v.direction);
}

namespace fused_detail {

// Element i of matrix `which` (several per op) of PE `pe` for replay r.
inline float input(int pe, int r, int which, std::size_t i) {
  return static_cast<float>(value(pe, r, i * 4 + static_cast<std::size_t>(which)));
}

// Writes rows x cols inputs of (pe, r, which) into `out` (the op's element type) and, when
// `ref` is given, their float values.
template <class T>
void fill(std::vector<T>& out, int pe, int r, int which, std::vector<float>* ref = nullptr) {
  if (ref != nullptr) ref->resize(out.size());
  for (std::size_t i = 0; i < out.size(); ++i) {
    const float x = input(pe, r, which, i);
    if constexpr (std::is_same_v<T, float>) {
      out[i] = x;
    } else {
      out[i] = device::ops::to_bf16(x);
    }
    if (ref != nullptr) (*ref)[i] = x;
  }
}

// c (rows x cols, ldc) += a (rows x k, lda) * b (k x cols, ldb), in double (exact here).
inline void gemm_add(double* c, std::size_t ldc, const float* a, std::size_t lda, const float* b,
                     std::size_t ldb, std::size_t rows, std::size_t cols, std::size_t k) {
  for (std::size_t i = 0; i < rows; ++i) {
    for (std::size_t j = 0; j < cols; ++j) {
      double sum = 0.0;
      for (std::size_t l = 0; l < k; ++l) {
        sum += static_cast<double>(a[i * lda + l]) * static_cast<double>(b[l * ldb + j]);
      }
      c[i * ldc + j] += sum;
    }
  }
}

// "" when c equals want element for element, else the first difference.
inline std::string compare(const std::vector<float>& c, const std::vector<double>& want,
                           std::size_t cols) {
  for (std::size_t i = 0; i < c.size(); ++i) {
    if (static_cast<double>(c[i]) != want[i]) {
      return "C[" + std::to_string(i / cols) + "][" + std::to_string(i % cols) +
             "] = " + std::to_string(c[i]) + ", want " + std::to_string(want[i]);
    }
  }
  return "";
}

constexpr float kUnwritten = -1000.0f;  // C's filler before each replay

template <class Options>
Options fused_options(const FusedVariant& v) {
  Options o;
  o.pattern = v.pattern;
  o.direction = v.direction;
  o.comm_blocks = 1;
  o.compute_blocks = 2;
  return o;
}

inline std::string what(const char* op, const FusedVariant& v) {
  return std::string(op) + " " + to_string(v);
}

// Runs the replay, naming the op and its variant in a failure.
template <class Call, class Write, class Check>
void replay(Runtime& rt, const std::string& name, Call&& call, Write&& write, Check&& check,
            const ReplayOptions& o) {
  try {
    (void)capture_and_replay(rt, call, write, check, o);
  } catch (const ReplayFailure& e) {
    throw ReplayFailure(name + ": " + e.what());
  }
}

template <class T>
constexpr ops::GemmDtype dtype_of() {
  return std::is_same_v<T, float> ? ops::GemmDtype::f32 : ops::GemmDtype::bf16;
}

// ag_gemm: C (m x n_local) = [every PE's a_shard (m_local x k)] x b (k x n_local).
template <class T>
void ag_gemm_case(Runtime& rt, const FusedVariant& v, const ReplayOptions& o) {
  const int me = rt.pe(), n_pes = rt.n_pes();
  const std::size_t m_local = 5, n_local = 6, k = 7, m = m_local * static_cast<std::size_t>(n_pes);
  auto opts = fused_options<ops::AgGemmOptions>(v);
  opts.tile_m = 4;  // tiles straddle two PEs' shards
  opts.tile_n = 4;
  opts.chunk_rows = 2;
  ops::AgGemm op(rt, m, n_local, k, dtype_of<T>(), opts);
  std::vector<T> a(m_local * k), b(k * n_local);
  std::vector<float> c(m * n_local);
  auto write = [&](int r) {
    fill(a, me, r, 0);
    fill(b, me, r, 1);
    std::fill(c.begin(), c.end(), kUnwritten);
  };
  auto call = [&](Stream& s) { op.run(s, a.data(), b.data(), c.data()); };
  auto check = [&](int r) {
    std::vector<T> scratch(m_local * k), scratch_b(k * n_local);
    std::vector<float> a_ref, shard_ref, b_ref;
    for (int q = 0; q < n_pes; ++q) {
      fill(scratch, q, r, 0, &shard_ref);
      a_ref.insert(a_ref.end(), shard_ref.begin(), shard_ref.end());
    }
    fill(scratch_b, me, r, 1, &b_ref);
    std::vector<double> want(m * n_local, 0.0);
    gemm_add(want.data(), n_local, a_ref.data(), k, b_ref.data(), n_local, m, n_local, k);
    return compare(c, want, n_local);
  };
  replay(rt, what("ag_gemm", v), call, write, check, o);
}

// gemm_rs: C (m_local x n, this PE's rows) = rows of sum over PEs of a_p (m x k) x b_p (k x n).
template <class T>
void gemm_rs_case(Runtime& rt, const FusedVariant& v, const ReplayOptions& o) {
  const int me = rt.pe(), n_pes = rt.n_pes();
  const std::size_t m_local = 3, n = 9, k = 5, m = m_local * static_cast<std::size_t>(n_pes);
  auto opts = fused_options<ops::GemmRsOptions>(v);
  opts.tile_m = 2;
  opts.tile_n = 4;
  ops::GemmRs op(rt, m, n, k, dtype_of<T>(), opts);
  std::vector<T> a(m * k), b(k * n);
  std::vector<float> c(m_local * n);
  auto write = [&](int r) {
    fill(a, me, r, 2);
    fill(b, me, r, 3);
    std::fill(c.begin(), c.end(), kUnwritten);
  };
  auto call = [&](Stream& s) { op.run(s, a.data(), b.data(), c.data()); };
  auto check = [&](int r) {
    std::vector<T> scratch_a(m * k), scratch_b(k * n);
    std::vector<float> a_ref, b_ref;
    std::vector<double> want(m_local * n, 0.0);
    for (int p = 0; p < n_pes; ++p) {
      fill(scratch_a, p, r, 2, &a_ref);
      fill(scratch_b, p, r, 3, &b_ref);
      gemm_add(want.data(), n, a_ref.data() + static_cast<std::size_t>(me) * m_local * k, k,
               b_ref.data(), n, m_local, n, k);
    }
    return compare(c, want, n);
  };
  replay(rt, what("gemm_rs", v), call, write, check, o);
}

// gemm_ar: C (m x n, on every PE) = sum over PEs of a_p (m x k) x b_p (k x n).
template <class T>
void gemm_ar_case(Runtime& rt, const FusedVariant& v, const ReplayOptions& o) {
  const int me = rt.pe(), n_pes = rt.n_pes();
  const std::size_t m = 7, n = 9, k = 5;  // shards of ceil(m / n_pes) rows, the last short
  auto opts = fused_options<ops::GemmArOptions>(v);
  opts.tile_m = 2;
  opts.tile_n = 4;
  ops::GemmAr op(rt, m, n, k, dtype_of<T>(), opts);
  std::vector<T> a(m * k), b(k * n);
  std::vector<float> c(m * n);
  auto write = [&](int r) {
    fill(a, me, r, 0);
    fill(b, me, r, 2);
    std::fill(c.begin(), c.end(), kUnwritten);
  };
  auto call = [&](Stream& s) { op.run(s, a.data(), b.data(), c.data()); };
  auto check = [&](int r) {
    std::vector<T> scratch_a(m * k), scratch_b(k * n);
    std::vector<float> a_ref, b_ref;
    std::vector<double> want(m * n, 0.0);
    for (int p = 0; p < n_pes; ++p) {
      fill(scratch_a, p, r, 0, &a_ref);
      fill(scratch_b, p, r, 2, &b_ref);
      gemm_add(want.data(), n, a_ref.data(), k, b_ref.data(), n, m, n, k);
    }
    return compare(c, want, n);
  };
  replay(rt, what("gemm_ar", v), call, write, check, o);
}

// gemm_as: C (m x n_local * n_pes) whose column block p is a_p (m x k) x b_p (k x n_local).
template <class T>
void gemm_as_case(Runtime& rt, const FusedVariant& v, const ReplayOptions& o) {
  const int me = rt.pe(), n_pes = rt.n_pes();
  const std::size_t m = 6, n_local = 5, k = 4, n = n_local * static_cast<std::size_t>(n_pes);
  auto opts = fused_options<ops::GemmAsOptions>(v);
  opts.tile_m = 4;
  opts.tile_n = 3;
  ops::GemmAs op(rt, m, n_local, k, dtype_of<T>(), opts);
  std::vector<T> a(m * k), b(k * n_local);
  std::vector<float> c(m * n);
  auto write = [&](int r) {
    fill(a, me, r, 1);
    fill(b, me, r, 3);
    std::fill(c.begin(), c.end(), kUnwritten);
  };
  auto call = [&](Stream& s) { op.run(s, a.data(), b.data(), c.data()); };
  auto check = [&](int r) {
    std::vector<T> scratch_a(m * k), scratch_b(k * n_local);
    std::vector<float> a_ref, b_ref;
    std::vector<double> want(m * n, 0.0);
    for (int p = 0; p < n_pes; ++p) {
      fill(scratch_a, p, r, 1, &a_ref);
      fill(scratch_b, p, r, 3, &b_ref);
      gemm_add(want.data() + static_cast<std::size_t>(p) * n_local, n, a_ref.data(), k,
               b_ref.data(), n_local, m, n_local, k);
    }
    return compare(c, want, n);
  };
  replay(rt, what("gemm_as", v), call, write, check, o);
}

}  // namespace fused_detail

// One op in variant `v` (an entry of kFusedVariants), its inputs fp32 or (bf16 = true) bf16:
// one call captured and replayed o.replays times, every result checked. Throws ReplayFailure.
inline void replay_ag_gemm(Runtime& rt, const FusedVariant& v, const ReplayOptions& o = {},
                           bool bf16 = false) {
  bf16 ? fused_detail::ag_gemm_case<device::bf16>(rt, v, o)
       : fused_detail::ag_gemm_case<float>(rt, v, o);
}
inline void replay_gemm_rs(Runtime& rt, const FusedVariant& v, const ReplayOptions& o = {},
                           bool bf16 = false) {
  bf16 ? fused_detail::gemm_rs_case<device::bf16>(rt, v, o)
       : fused_detail::gemm_rs_case<float>(rt, v, o);
}
inline void replay_gemm_ar(Runtime& rt, const FusedVariant& v, const ReplayOptions& o = {},
                           bool bf16 = false) {
  bf16 ? fused_detail::gemm_ar_case<device::bf16>(rt, v, o)
       : fused_detail::gemm_ar_case<float>(rt, v, o);
}
inline void replay_gemm_as(Runtime& rt, const FusedVariant& v, const ReplayOptions& o = {},
                           bool bf16 = false) {
  bf16 ? fused_detail::gemm_as_case<device::bf16>(rt, v, o)
       : fused_detail::gemm_as_case<float>(rt, v, o);
}

// Every op in every variant, in order (a process program's whole run).
inline void replay_all_fused(Runtime& rt, const ReplayOptions& o = {}) {
  for (const FusedVariant& v : kFusedVariants) {
    replay_ag_gemm(rt, v, o);
    replay_gemm_rs(rt, v, o);
    replay_gemm_ar(rt, v, o);
    replay_gemm_as(rt, v, o);
  }
}

}  // namespace tessera::graphs_test
