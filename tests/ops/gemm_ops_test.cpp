// ag_gemm and gemm_rs against a reference (gather, then a naive GEMM in double): P = 1..4, shapes
// that are no multiple of the tiles, fresh random data on every call, 20 calls in a row with no
// reset and no barrier, a mode that delays the communication so the compute side's waits are
// exercised, both ag_gemm variants, and bad arguments.
//
// Error bound (max-norm relative, max |C - C_ref| / max |C_ref|): 1e-5 for fp32 inputs, 1e-2 for
// bf16 inputs (the reference takes the same bf16-rounded values, so only accumulation differs).
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "gemm_ops_reference.hpp"
#include "harness/run_pes.hpp"
#include "tessera/ops/ag_gemm.hpp"
#include "tessera/ops/gemm_rs.hpp"
#include "tessera/tessera.hpp"

namespace tessera::gemm_test {
namespace {

using harness::run_pes;
using ops::AgGemm;
using ops::AgGemmOptions;
using ops::AgGemmVariant;
using ops::GemmDtype;
using ops::GemmRs;
using ops::GemmRsOptions;

constexpr double kF32Bound = 1e-5;
constexpr double kBf16Bound = 1e-2;

// Small tiles so that tiles straddle ranks' shards and chunks, and no extent is a multiple.
AgGemmOptions small_ag_options(AgGemmVariant variant, std::uint32_t delay_us) {
  AgGemmOptions o;
  o.variant = variant;
  o.comm_blocks = 1;
  o.compute_blocks = 3;
  o.tile_m = 16;
  o.tile_n = 24;
  o.chunk_rows = 7;
  o.comm_delay_us = delay_us;
  return o;
}

struct AgCase {
  int pes;
  AgGemmVariant variant;
  GemmDtype dtype;
  bool a_in_heap;
  std::uint32_t delay_us;
  int calls;
};

template <class T>
void run_ag_gemm_case(Runtime& rt, const AgCase& tc) {
  constexpr bool kBf16 = std::is_same_v<T, device::bf16>;
  const int me = rt.pe(), n = rt.n_pes();
  const std::size_t m_local = 37, n_local = 45, k = 29, m = m_local * static_cast<std::size_t>(n);
  AgGemm op(rt, m, n_local, k, tc.dtype, small_ag_options(tc.variant, tc.delay_us));
  EXPECT_EQ(op.variant(), tc.variant);
  Symmetric<T> a_sym = rt.alloc<T>(m_local * k);  // collective either way
  std::vector<T> a_vec(m_local * k), b(k * n_local);
  std::vector<float> c(m * n_local);
  for (int call = 0; call < tc.calls; ++call) {
    std::vector<float> a_global;
    for (int q = 0; q < n; ++q) {
      const std::vector<float> shard = random_matrix(m_local, k, seed(q, call, 0), kBf16);
      a_global.insert(a_global.end(), shard.begin(), shard.end());
    }
    const std::vector<float> b_f = random_matrix(k, n_local, seed(me, call, 1), kBf16);
    const float* my_rows = a_global.data() + static_cast<std::size_t>(me) * m_local * k;
    T* a_ptr = tc.a_in_heap ? a_sym.get() : a_vec.data();
    if constexpr (kBf16) {
      const auto a_b = to_bf16(std::vector<float>(my_rows, my_rows + m_local * k));
      std::memcpy(a_ptr, a_b.data(), a_b.size() * sizeof(T));
      b = to_bf16(b_f);
    } else {
      std::memcpy(a_ptr, my_rows, m_local * k * sizeof(float));
      b = b_f;
    }
    std::fill(c.begin(), c.end(), -7.0f);
    op.run(rt.stream(), a_ptr, b.data(), c.data());
    rt.stream().synchronize();

    std::vector<double> want(m * n_local, 0.0);
    reference_gemm_add(want, a_global.data(), b_f.data(), m, n_local, k);
    const double err = relative_error(c.data(), want);
    ASSERT_LE(err, kBf16 ? kBf16Bound : kF32Bound)
        << "PE " << me << " call " << call << " variant " << to_string(tc.variant);
    if (tc.variant == AgGemmVariant::push) {
      const T* gathered = static_cast<const T*>(op.gathered_a());
      for (std::size_t i = 0; i < m * k; ++i) {
        ASSERT_EQ(device::ops::to_float(gathered[i]), a_global[i]) << "gathered element " << i;
      }
    } else {
      EXPECT_EQ(op.gathered_a(), nullptr);
    }
  }
}

void run_ag_gemm(const AgCase& tc) {
  run_pes(tc.pes, [&](Runtime& rt) {
    if (tc.dtype == GemmDtype::f32) {
      run_ag_gemm_case<float>(rt, tc);
    } else {
      run_ag_gemm_case<device::bf16>(rt, tc);
    }
  });
}

class AgGemmPes : public ::testing::TestWithParam<int> {};
INSTANTIATE_TEST_SUITE_P(P, AgGemmPes, ::testing::Values(1, 2, 3, 4));

TEST_P(AgGemmPes, PushMatchesReferenceOverTwentyCallsF32) {
  run_ag_gemm({GetParam(), AgGemmVariant::push, GemmDtype::f32, false, 0, 20});
}
TEST_P(AgGemmPes, PullMatchesReferenceOverTwentyCallsF32) {
  run_ag_gemm({GetParam(), AgGemmVariant::pull, GemmDtype::f32, false, 0, 20});
}
TEST_P(AgGemmPes, PullReadsSymmetricShardInPlace) {
  run_ag_gemm({GetParam(), AgGemmVariant::pull, GemmDtype::f32, true, 0, 20});
}
TEST_P(AgGemmPes, PushMatchesReferenceBf16) {
  run_ag_gemm({GetParam(), AgGemmVariant::push, GemmDtype::bf16, false, 0, 20});
}
TEST_P(AgGemmPes, PullMatchesReferenceBf16) {
  run_ag_gemm({GetParam(), AgGemmVariant::pull, GemmDtype::bf16, true, 0, 20});
}
// The communication blocks wait 2 ms before each chunk: compute blocks must wait for every flag
// their tiles cover, or they read stale rows and the result is wrong.
TEST_P(AgGemmPes, PushComputeWaitsForDelayedChunks) {
  run_ag_gemm({GetParam(), AgGemmVariant::push, GemmDtype::f32, false, 2000, 5});
}
TEST_P(AgGemmPes, PullComputeWaitsForDelayedReadySignal) {
  run_ag_gemm({GetParam(), AgGemmVariant::pull, GemmDtype::f32, true, 20000, 5});
}

TEST(AgGemm, AutomaticPicksPullWhenEveryPeerIsMapped) {
  run_pes(3, [](Runtime& rt) {
    AgGemm op(rt, 768, 64, 64, GemmDtype::f32);  // above the fusion threshold
    EXPECT_EQ(op.variant(), AgGemmVariant::pull);
  });
}

template <class Fn>
void expect_invalid(Fn&& fn, const std::string& needle) {
  try {
    fn();
    ADD_FAILURE() << "expected Error(invalid_argument) mentioning '" << needle << "'";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument) << e.what();
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(AgGemm, RejectsBadArguments) {
  run_pes(2, [](Runtime& rt) {
    expect_invalid([&] { AgGemm(rt, 9, 4, 5, GemmDtype::f32); }, "multiple of the number of PEs");
    expect_invalid([&] { AgGemm(rt, 0, 4, 5, GemmDtype::f32); }, "non-zero");
    AgGemmOptions no_compute;
    no_compute.compute_blocks = 0;
    expect_invalid([&] { AgGemm(rt, 8, 4, 5, GemmDtype::f32, no_compute); }, "compute_blocks");
    AgGemm op(rt, 8, 4, 5, GemmDtype::f32);
    std::vector<float> a(4 * 5), b(5 * 4), c(8 * 4);
    std::vector<device::bf16> a16(4 * 5), b16(5 * 4);
    expect_invalid([&] { op.run(rt.stream(), a16.data(), b16.data(), c.data()); },
                   "dtype mismatch");
    expect_invalid([&] { op.run(rt.stream(), a.data(), nullptr, c.data()); }, "null b");
    // A shard that starts in the heap but runs past its end cannot be symmetric.
    auto* tail = static_cast<float*>(rt.heap_base()) + rt.heap_size() / sizeof(float) - 2;
    expect_invalid([&] { op.run(rt.stream(), tail, b.data(), c.data()); }, "past the heap");
  });
}

// --- gemm_rs ---

struct RsCase {
  int pes;
  GemmDtype dtype;
  std::uint32_t delay_us;
  int calls;
};

template <class T>
void run_gemm_rs_case(Runtime& rt, const RsCase& tc) {
  constexpr bool kBf16 = std::is_same_v<T, device::bf16>;
  const int me = rt.pe(), n_pes = rt.n_pes();
  const std::size_t m_local = 23, n = 53, k_local = 19,
                    m = m_local * static_cast<std::size_t>(n_pes);
  GemmRsOptions options;
  options.compute_blocks = 3;
  options.tile_m = 8;
  options.tile_n = 20;
  options.comm_delay_us = tc.delay_us;
  GemmRs op(rt, m, n, k_local, tc.dtype, options);
  std::vector<float> c(m_local * n);
  for (int call = 0; call < tc.calls; ++call) {
    std::vector<double> want(m_local * n, 0.0);
    std::vector<float> my_a, my_b;
    for (int p = 0; p < n_pes; ++p) {
      const std::vector<float> a = random_matrix(m, k_local, seed(p, call, 2), kBf16);
      const std::vector<float> b = random_matrix(k_local, n, seed(p, call, 3), kBf16);
      reference_gemm_add(want, a.data() + static_cast<std::size_t>(me) * m_local * k_local,
                         b.data(), m_local, n, k_local);
      if (p == me) {
        my_a = a;
        my_b = b;
      }
    }
    std::fill(c.begin(), c.end(), -7.0f);
    if constexpr (kBf16) {
      const auto a16 = to_bf16(my_a), b16 = to_bf16(my_b);
      op.run(rt.stream(), a16.data(), b16.data(), c.data());
      rt.stream().synchronize();
    } else {
      op.run(rt.stream(), my_a.data(), my_b.data(), c.data());
      rt.stream().synchronize();
    }
    const double err = relative_error(c.data(), want);
    ASSERT_LE(err, kBf16 ? kBf16Bound : kF32Bound) << "PE " << me << " call " << call;
  }
}

void run_gemm_rs(const RsCase& tc) {
  run_pes(tc.pes, [&](Runtime& rt) {
    if (tc.dtype == GemmDtype::f32) {
      run_gemm_rs_case<float>(rt, tc);
    } else {
      run_gemm_rs_case<device::bf16>(rt, tc);
    }
  });
}

class GemmRsPes : public ::testing::TestWithParam<int> {};
INSTANTIATE_TEST_SUITE_P(P, GemmRsPes, ::testing::Values(1, 2, 3, 4));

TEST_P(GemmRsPes, MatchesReferenceOverTwentyCallsF32) {
  run_gemm_rs({GetParam(), GemmDtype::f32, 0, 20});
}
TEST_P(GemmRsPes, MatchesReferenceBf16) { run_gemm_rs({GetParam(), GemmDtype::bf16, 0, 20}); }
// Every partial tile is published 1 ms late: owners must wait for each slot's flag.
TEST_P(GemmRsPes, OwnerWaitsForDelayedPartials) {
  run_gemm_rs({GetParam(), GemmDtype::f32, 1000, 3});
}

TEST(GemmRs, RejectsBadArguments) {
  run_pes(3, [](Runtime& rt) {
    expect_invalid([&] { GemmRs(rt, 10, 4, 5, GemmDtype::f32); }, "multiple of the number of PEs");
    expect_invalid([&] { GemmRs(rt, 9, 0, 5, GemmDtype::f32); }, "non-zero");
    GemmRs op(rt, 9, 4, 5, GemmDtype::bf16);
    std::vector<float> a(9 * 5), b(5 * 4), c(3 * 4);
    expect_invalid([&] { op.run(rt.stream(), a.data(), b.data(), c.data()); }, "dtype mismatch");
    std::vector<device::bf16> a16(9 * 5), b16(5 * 4);
    expect_invalid([&] { op.run(rt.stream(), a16.data(), b16.data(), nullptr); }, "null c");
  });
}

}  // namespace
}  // namespace tessera::gemm_test
