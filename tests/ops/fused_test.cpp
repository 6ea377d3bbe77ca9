// The fused ops in every overlap pattern (issue 16): ag_gemm, gemm_rs, gemm_ar and gemm_as in
// bulk_synchronous, producer_consumer, workgroup_specialized and fused_sequential, push and pull,
// and all_reduce_rmsnorm in its two patterns, each against the same double-precision reference:
// P = 1..5, shapes that are no multiple of the tiles (and shards that are short or empty), fresh
// random data on every one of 20 calls with no reset and no barrier, a mode that delays every
// tile's communication on one PE so the others' waits are exercised, and bad arguments. Also
// Stream::wait_for, which producer_consumer is built on, and the taxonomy's names and rule.
//
// Error bound (max-norm relative, max |C - C_ref| / max |C_ref|): 1e-5 for fp32 inputs, 1e-2 for
// bf16 inputs (the reference takes the same bf16-rounded values, so only accumulation differs);
// all_reduce_rmsnorm: 1e-5 (f32), 2e-2 (bf16), 4e-3 (f16), since the output is rounded once (and
// bulk_synchronous rounds the all-reduced sum once more).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <string>
#include <thread>
#include <tuple>
#include <type_traits>
#include <vector>

#include "gemm_ops_reference.hpp"
#include "harness/run_pes.hpp"
#include "ops/overlap_support.hpp"
#include "tessera/device/ops/impl/fused_handshake.hpp"
#include "tessera/ops/ag_gemm.hpp"
#include "tessera/ops/all_reduce_rmsnorm.hpp"
#include "tessera/ops/gemm_ar.hpp"
#include "tessera/ops/gemm_as.hpp"
#include "tessera/ops/gemm_rs.hpp"
#include "tessera/ops/overlap.hpp"
#include "tessera/tessera.hpp"

namespace tessera::gemm_test {
namespace {

using harness::run_pes;
using ops::CommDirection;
using ops::GemmDtype;
using ops::OpKind;
using ops::OverlapPattern;

constexpr double kF32Bound = 1e-5;
constexpr double kBf16Bound = 1e-2;

template <class Fn>
void expect_error(ErrorCode code, Fn&& fn, const std::string& needle) {
  try {
    fn();
    ADD_FAILURE() << "expected an Error mentioning '" << needle << "'";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

template <class Fn>
void expect_invalid(Fn&& fn, const std::string& needle) {
  expect_error(ErrorCode::invalid_argument, std::forward<Fn>(fn), needle);
}

// Copies fp32 reference values into the op's input type (already bf16-rounded for bf16 runs).
template <class T>
std::vector<T> as_input(const std::vector<float>& v) {
  if constexpr (std::is_same_v<T, float>) {
    return v;
  } else {
    return to_bf16(v);
  }
}

// --- one case of a GEMM op ---

struct Case {
  OpKind op;
  OverlapPattern pattern;
  CommDirection direction;
  int pes;
  GemmDtype dtype = GemmDtype::f32;
  std::uint32_t delay_us = 0;
  int calls = 20;
  int comm_blocks = 1;
};

std::string describe(const Case& c) {
  return std::string(ops::to_string(c.op)) + " " + ops::to_string(c.pattern) + " " +
         ops::to_string(c.direction) + " P=" + std::to_string(c.pes);
}

template <class T>
void run_gemm_ar(Runtime& rt, const Case& tc) {
  constexpr bool kBf16 = std::is_same_v<T, device::bf16>;
  const int me = rt.pe(), n_pes = rt.n_pes();
  const std::size_t m = 19, n = 21, k = 13;
  ops::GemmArOptions o;
  o.pattern = tc.pattern;
  o.direction = tc.direction;
  o.comm_blocks = tc.comm_blocks;
  o.compute_blocks = 2;
  o.tile_m = 3;
  o.tile_n = 8;
  o.comm_delay_us = me == 1 ? tc.delay_us : 0;  // one slow PE
  ops::GemmAr op(rt, m, n, k, tc.dtype, o);
  EXPECT_EQ(op.pattern(), tc.pattern);
  if (tc.pattern != OverlapPattern::bulk_synchronous) {
    EXPECT_EQ(op.direction(), tc.direction);
  }
  std::vector<float> c(m * n);
  for (int call = 0; call < tc.calls; ++call) {
    std::vector<double> want(m * n, 0.0);
    std::vector<float> my_a, my_b;
    for (int p = 0; p < n_pes; ++p) {
      const auto a = random_matrix(m, k, seed(p, call, 10), kBf16);
      const auto b = random_matrix(k, n, seed(p, call, 11), kBf16);
      reference_gemm_add(want, a.data(), b.data(), m, n, k);
      if (p == me) {
        my_a = a;
        my_b = b;
      }
    }
    std::fill(c.begin(), c.end(), -7.0f);
    const auto a_in = as_input<T>(my_a), b_in = as_input<T>(my_b);
    op.run(rt.stream(), a_in.data(), b_in.data(), c.data());
    rt.stream().synchronize();
    ASSERT_LE(relative_error(c.data(), want), kBf16 ? kBf16Bound : kF32Bound)
        << describe(tc) << " PE " << me << " call " << call;
  }
}

template <class T>
void run_gemm_as(Runtime& rt, const Case& tc) {
  constexpr bool kBf16 = std::is_same_v<T, device::bf16>;
  const int me = rt.pe(), n_pes = rt.n_pes();
  const std::size_t m = 17, n_local = 11, k = 13, n = n_local * static_cast<std::size_t>(n_pes);
  ops::GemmAsOptions o;
  o.pattern = tc.pattern;
  o.direction = tc.direction;
  o.comm_blocks = tc.comm_blocks;
  o.compute_blocks = 2;
  o.tile_m = 5;
  o.tile_n = 4;
  o.comm_delay_us = me == 1 ? tc.delay_us : 0;  // one slow PE
  ops::GemmAs op(rt, m, n_local, k, tc.dtype, o);
  EXPECT_EQ(op.pattern(), tc.pattern);
  std::vector<float> c(m * n);
  for (int call = 0; call < tc.calls; ++call) {
    // Every PE's a differs too: C's block p is PE p's a times PE p's b.
    std::vector<double> want(m * n, 0.0);
    std::vector<float> my_a, my_b;
    for (int p = 0; p < n_pes; ++p) {
      const auto a = random_matrix(m, k, seed(p, call, 12), kBf16);
      const auto b = random_matrix(k, n_local, seed(p, call, 13), kBf16);
      std::vector<double> block(m * n_local, 0.0);
      reference_gemm_add(block, a.data(), b.data(), m, n_local, k);
      for (std::size_t i = 0; i < m; ++i) {
        for (std::size_t j = 0; j < n_local; ++j) {
          want[i * n + static_cast<std::size_t>(p) * n_local + j] = block[i * n_local + j];
        }
      }
      if (p == me) {
        my_a = a;
        my_b = b;
      }
    }
    std::fill(c.begin(), c.end(), -7.0f);
    const auto a_in = as_input<T>(my_a), b_in = as_input<T>(my_b);
    op.run(rt.stream(), a_in.data(), b_in.data(), c.data());
    rt.stream().synchronize();
    ASSERT_LE(relative_error(c.data(), want), kBf16 ? kBf16Bound : kF32Bound)
        << describe(tc) << " PE " << me << " call " << call;
  }
}

template <class T>
void run_ag_gemm(Runtime& rt, const Case& tc) {
  constexpr bool kBf16 = std::is_same_v<T, device::bf16>;
  const int me = rt.pe(), n_pes = rt.n_pes();
  const std::size_t m_local = 7, n_local = 9, k = 11, m = m_local * static_cast<std::size_t>(n_pes);
  ops::AgGemmOptions o;
  o.pattern = tc.pattern;
  o.variant = tc.direction == CommDirection::push   ? ops::AgGemmVariant::push
              : tc.direction == CommDirection::pull ? ops::AgGemmVariant::pull
                                                    : ops::AgGemmVariant::automatic;
  o.comm_blocks = tc.comm_blocks;
  o.compute_blocks = 2;
  o.tile_m = 4;
  o.tile_n = 5;
  o.chunk_rows = 3;
  o.comm_delay_us = me == 1 ? tc.delay_us : 0;  // one slow PE
  ops::AgGemm op(rt, m, n_local, k, tc.dtype, o);
  EXPECT_EQ(op.pattern(), tc.pattern);
  std::vector<float> c(m * n_local);
  for (int call = 0; call < tc.calls; ++call) {
    std::vector<float> a_global;
    for (int q = 0; q < n_pes; ++q) {
      const auto shard = random_matrix(m_local, k, seed(q, call, 14), kBf16);
      a_global.insert(a_global.end(), shard.begin(), shard.end());
    }
    const auto b = random_matrix(k, n_local, seed(me, call, 15), kBf16);
    const float* mine = a_global.data() + static_cast<std::size_t>(me) * m_local * k;
    const auto a_in = as_input<T>(std::vector<float>(mine, mine + m_local * k));
    const auto b_in = as_input<T>(b);
    std::fill(c.begin(), c.end(), -7.0f);
    op.run(rt.stream(), a_in.data(), b_in.data(), c.data());
    rt.stream().synchronize();
    std::vector<double> want(m * n_local, 0.0);
    reference_gemm_add(want, a_global.data(), b.data(), m, n_local, k);
    ASSERT_LE(relative_error(c.data(), want), kBf16 ? kBf16Bound : kF32Bound)
        << describe(tc) << " PE " << me << " call " << call;
  }
}

template <class T>
void run_gemm_rs(Runtime& rt, const Case& tc) {
  constexpr bool kBf16 = std::is_same_v<T, device::bf16>;
  const int me = rt.pe(), n_pes = rt.n_pes();
  const std::size_t m_local = 5, n = 17, k = 9, m = m_local * static_cast<std::size_t>(n_pes);
  ops::GemmRsOptions o;
  o.pattern = tc.pattern;
  o.direction = tc.direction;
  o.comm_blocks = tc.comm_blocks;
  o.compute_blocks = 2;
  o.tile_m = 2;
  o.tile_n = 7;
  o.comm_delay_us = me == 1 ? tc.delay_us : 0;  // one slow PE
  ops::GemmRs op(rt, m, n, k, tc.dtype, o);
  EXPECT_EQ(op.pattern(), tc.pattern);
  std::vector<float> c(m_local * n);
  for (int call = 0; call < tc.calls; ++call) {
    std::vector<double> want(m_local * n, 0.0);
    std::vector<float> my_a, my_b;
    for (int p = 0; p < n_pes; ++p) {
      const auto a = random_matrix(m, k, seed(p, call, 16), kBf16);
      const auto b = random_matrix(k, n, seed(p, call, 17), kBf16);
      reference_gemm_add(want, a.data() + static_cast<std::size_t>(me) * m_local * k, b.data(),
                         m_local, n, k);
      if (p == me) {
        my_a = a;
        my_b = b;
      }
    }
    std::fill(c.begin(), c.end(), -7.0f);
    const auto a_in = as_input<T>(my_a), b_in = as_input<T>(my_b);
    op.run(rt.stream(), a_in.data(), b_in.data(), c.data());
    rt.stream().synchronize();
    ASSERT_LE(relative_error(c.data(), want), kBf16 ? kBf16Bound : kF32Bound)
        << describe(tc) << " PE " << me << " call " << call;
  }
}

template <class T>
void run_case_typed(Runtime& rt, const Case& tc) {
  switch (tc.op) {
    case OpKind::gemm_ar:
      run_gemm_ar<T>(rt, tc);
      return;
    case OpKind::gemm_as:
      run_gemm_as<T>(rt, tc);
      return;
    case OpKind::ag_gemm:
      run_ag_gemm<T>(rt, tc);
      return;
    case OpKind::gemm_rs:
      run_gemm_rs<T>(rt, tc);
      return;
    case OpKind::all_reduce_rmsnorm:
      break;
  }
  FAIL() << "not a GEMM op";
}

void run_case(const Case& tc) {
  run_pes(tc.pes, [&](Runtime& rt) {
    if (tc.dtype == GemmDtype::f32) {
      run_case_typed<float>(rt, tc);
    } else {
      run_case_typed<device::bf16>(rt, tc);
    }
  });
}

// Every pattern x direction that applies: bulk_synchronous has no direction of its own.
struct Variant {
  OverlapPattern pattern;
  CommDirection direction;
};
const Variant kVariants[] = {
    {OverlapPattern::bulk_synchronous, CommDirection::automatic},
    {OverlapPattern::producer_consumer, CommDirection::push},
    {OverlapPattern::producer_consumer, CommDirection::pull},
    {OverlapPattern::workgroup_specialized, CommDirection::push},
    {OverlapPattern::workgroup_specialized, CommDirection::pull},
    {OverlapPattern::fused_sequential, CommDirection::push},
    {OverlapPattern::fused_sequential, CommDirection::pull},
};

using Param = std::tuple<OpKind, int /*variant*/, int /*pes*/>;

class FusedPatterns : public ::testing::TestWithParam<Param> {};

std::string norm_param_name(
    const ::testing::TestParamInfo<std::tuple<ops::Dtype, OverlapPattern, int>>& p) {
  return std::string(ops::to_string(std::get<0>(p.param))) + "_" +
         ops::to_string(std::get<1>(p.param)) + "_P" + std::to_string(std::get<2>(p.param));
}

std::string param_name(const ::testing::TestParamInfo<Param>& info) {
  const auto [op, v, pes] = info.param;
  return std::string(ops::to_string(op)) + "_" + ops::to_string(kVariants[v].pattern) + "_" +
         ops::to_string(kVariants[v].direction) + "_P" + std::to_string(pes);
}

INSTANTIATE_TEST_SUITE_P(All, FusedPatterns,
                         ::testing::Combine(::testing::Values(OpKind::gemm_ar, OpKind::gemm_as,
                                                              OpKind::ag_gemm, OpKind::gemm_rs),
                                            ::testing::Range(0, 7), ::testing::Range(1, 6)),
                         param_name);

TEST_P(FusedPatterns, MatchesReferenceOverTwentyCallsF32) {
  const auto [op, v, pes] = GetParam();
  run_case({op, kVariants[v].pattern, kVariants[v].direction, pes});
}

// One pattern of one op at a fixed P: bf16 inputs, the delay hook, several communicating blocks.
using OpVariant = std::tuple<OpKind, int /*variant*/>;

Case make_case(const OpVariant& p, int pes) {
  const auto [op, v] = p;
  return Case{op, kVariants[v].pattern, kVariants[v].direction, pes};
}

std::string op_variant_name(const ::testing::TestParamInfo<OpVariant>& info) {
  const auto [op, v] = info.param;
  return std::string(ops::to_string(op)) + "_" + ops::to_string(kVariants[v].pattern) + "_" +
         ops::to_string(kVariants[v].direction);
}

const auto kGemmOps =
    ::testing::Values(OpKind::gemm_ar, OpKind::gemm_as, OpKind::ag_gemm, OpKind::gemm_rs);

class FusedPatternsBf16 : public ::testing::TestWithParam<OpVariant> {};
INSTANTIATE_TEST_SUITE_P(All, FusedPatternsBf16,
                         ::testing::Combine(kGemmOps, ::testing::Range(0, 7)), op_variant_name);

TEST_P(FusedPatternsBf16, MatchesReferenceAtThreePes) {
  Case tc = make_case(GetParam(), 3);
  tc.dtype = GemmDtype::bf16;
  tc.calls = 3;
  run_case(tc);
}

// The pipelined patterns (variants 1..6): PE 1 starts every tile's communication 3 ms late, so
// the PEs receiving from it must wait for each flag, or they read stale (or the -7 filler) values
// and the result is wrong.
class FusedPatternsDelayed : public ::testing::TestWithParam<OpVariant> {};
INSTANTIATE_TEST_SUITE_P(All, FusedPatternsDelayed,
                         ::testing::Combine(kGemmOps, ::testing::Range(1, 7)), op_variant_name);

TEST_P(FusedPatternsDelayed, ReceiverWaitsForDelayedTiles) {
  Case tc = make_case(GetParam(), 3);
  tc.delay_us = 3000;
  tc.calls = 2;
  run_case(tc);
}

// producer_consumer and workgroup_specialized (variants 1..4) with three communicating blocks:
// the publishing and receiving steps are split among them.
class FusedPatternsCommBlocks : public ::testing::TestWithParam<OpVariant> {};
INSTANTIATE_TEST_SUITE_P(All, FusedPatternsCommBlocks,
                         ::testing::Combine(kGemmOps, ::testing::Range(1, 5)), op_variant_name);

TEST_P(FusedPatternsCommBlocks, SplitsCommunicationOverThreeBlocks) {
  Case tc = make_case(GetParam(), 4);
  tc.comm_blocks = 3;
  tc.calls = 4;
  run_case(tc);
}

// gemm_ar's row shards are short or empty when m < n_pes * tile_m: m = 2 over 5 PEs.
TEST(GemmAr, EmptyShardsStillReduce) {
  run_pes(5, [](Runtime& rt) {
    for (const Variant& v : kVariants) {
      ops::GemmArOptions o;
      o.pattern = v.pattern;
      o.direction = v.direction;
      o.tile_m = 4;
      o.tile_n = 4;
      ops::GemmAr op(rt, 2, 3, 2, GemmDtype::f32, o);
      // a = 1, b = (pe + 1): every element of C is sum_p 2 * (p + 1) = 30.
      const std::vector<float> a(2 * 2, 1.0f), b(2 * 3, static_cast<float>(rt.pe() + 1));
      std::vector<float> c(2 * 3, -7.0f);
      for (int call = 0; call < 3; ++call) {
        op.run(rt.stream(), a.data(), b.data(), c.data());
        rt.stream().synchronize();
        for (float x : c) ASSERT_EQ(x, 30.0f) << ops::to_string(v.pattern);
      }
    }
  });
}

// Options that leave the tile at 0 x 0 get the backend's: 256 x 512 on the host (a BLAS call
// per tile), 64 x 256 on a GPU, each side at most C's.
TEST(FusedOps, DefaultTileIsTheBackends) {
  const ops::GemmTileShape host = detail::default_gemm_tile(Backend::host, 2048, 4096);
  EXPECT_EQ(host.m, 256u);
  EXPECT_EQ(host.n, 512u);
  const ops::GemmTileShape gpu = detail::default_gemm_tile(Backend::cuda, 2048, 4096);
  EXPECT_EQ(gpu.m, 64u);
  EXPECT_EQ(gpu.n, 256u);
  const ops::GemmTileShape small = detail::default_gemm_tile(Backend::host, 19, 300);
  EXPECT_EQ(small.m, 19u);
  EXPECT_EQ(small.n, 300u);
  EXPECT_EQ(ops::AgGemmOptions{}.tile_m, 0u);
  EXPECT_EQ(ops::GemmRsOptions{}.tile_n, 0u);
}

// With the default options C of 600 x 520 spans several host tiles in both directions (two row
// shards of 300 over 2 PEs, each 256 + 44 rows; 512 + 8 columns).
TEST(GemmAr, DefaultTilesSpanSeveralTilesOfC) {
  run_pes(2, [](Runtime& rt) {
    for (const Variant& v : kVariants) {
      ops::GemmArOptions o;
      o.pattern = v.pattern;
      o.direction = v.direction;
      const std::size_t m = 600, n = 520, k = 2;
      ops::GemmAr op(rt, m, n, k, GemmDtype::f32, o);
      // a = 1, b = (pe + 1): every element of C is sum_p 2 * (p + 1) = 6.
      const std::vector<float> a(m * k, 1.0f), b(k * n, static_cast<float>(rt.pe() + 1));
      std::vector<float> c(m * n, -7.0f);
      op.run(rt.stream(), a.data(), b.data(), c.data());
      rt.stream().synchronize();
      for (std::size_t i = 0; i < c.size(); ++i) {
        ASSERT_EQ(c[i], 6.0f) << ops::to_string(v.pattern) << " element " << i;
      }
    }
  });
}

TEST(Overlap, AutomaticResolvesAndSaysWhatItChose) {
  run_pes(2, [](Runtime& rt) {
    ops::GemmAr small(rt, 16, 16, 16, GemmDtype::f32);
    EXPECT_EQ(small.pattern(), OverlapPattern::bulk_synchronous);
    EXPECT_EQ(small.direction(), CommDirection::automatic);
    ops::GemmAr large(rt, 256, 256, 256, GemmDtype::f32);
    EXPECT_EQ(large.pattern(), OverlapPattern::fused_sequential);
    EXPECT_EQ(large.direction(), CommDirection::pull);  // every peer is mapped
    ops::GemmAs gas(rt, 256, 256, 256, GemmDtype::f32);
    EXPECT_EQ(gas.pattern(), OverlapPattern::workgroup_specialized);
    // ag_gemm and gemm_rs: bulk-synchronous below the fusion threshold, then the measured rule.
    ops::AgGemm ag_small(rt, 8, 4, 4, GemmDtype::f32);
    EXPECT_EQ(ag_small.pattern(), OverlapPattern::bulk_synchronous);
    ops::AgGemm ag(rt, 256, 128, 256, GemmDtype::f32);
    EXPECT_EQ(ag.pattern(), OverlapPattern::workgroup_specialized);
    ops::GemmRs rs(rt, 256, 256, 128, GemmDtype::f32);
    EXPECT_EQ(rs.pattern(), OverlapPattern::producer_consumer);
    EXPECT_EQ(rs.direction(), CommDirection::pull);
    // fused_sequential asked for without a direction is gemm_rs's original push kernel.
    ops::GemmRsOptions fused;
    fused.pattern = OverlapPattern::fused_sequential;
    ops::GemmRs rs_fused(rt, 8, 4, 4, GemmDtype::f32, fused);
    EXPECT_EQ(rs_fused.direction(), CommDirection::push);
  });
}

TEST(Overlap, NamesAndParsing) {
  EXPECT_STREQ(ops::to_string(OverlapPattern::producer_consumer), "producer_consumer");
  EXPECT_STREQ(ops::to_string(CommDirection::pull), "pull");
  EXPECT_STREQ(ops::to_string(OpKind::all_reduce_rmsnorm), "all_reduce_rmsnorm");
  for (OverlapPattern p : {OverlapPattern::automatic, OverlapPattern::bulk_synchronous,
                           OverlapPattern::producer_consumer, OverlapPattern::workgroup_specialized,
                           OverlapPattern::fused_sequential}) {
    EXPECT_EQ(ops::overlap_pattern_from_string(ops::to_string(p)), p);
  }
  EXPECT_EQ(ops::overlap_pattern_from_string("auto"), OverlapPattern::automatic);
  EXPECT_EQ(ops::comm_direction_from_string("push"), CommDirection::push);
  expect_invalid([] { ops::overlap_pattern_from_string("fused"); },
                 "overlap pattern 'fused' is not one of bulk_synchronous, producer_consumer");
  expect_invalid([] { ops::comm_direction_from_string("sideways"); },
                 "'sideways' is not one of push, pull");
  EXPECT_FALSE(ops::overlap_applies(OpKind::all_reduce_rmsnorm, OverlapPattern::producer_consumer));
  EXPECT_TRUE(ops::overlap_applies(OpKind::gemm_as, OverlapPattern::producer_consumer));
  EXPECT_EQ(ops::resolve_overlap(OpKind::gemm_ar, 1024, 1024, 1024, 1, true),
            OverlapPattern::bulk_synchronous);
  // The measured rule (docs/perf/earlier-runs.md, "taxonomy"): bulk below the fusion threshold,
  // then per op.
  EXPECT_EQ(ops::resolve_overlap(OpKind::gemm_ar, 64, 64, 64, 4, true),
            OverlapPattern::bulk_synchronous);
  EXPECT_EQ(ops::resolve_overlap(OpKind::ag_gemm, 1024, 256, 1024, 4, true),
            OverlapPattern::workgroup_specialized);
  EXPECT_EQ(ops::resolve_overlap(OpKind::gemm_as, 1024, 256, 1024, 4, true),
            OverlapPattern::workgroup_specialized);
  EXPECT_EQ(ops::resolve_overlap(OpKind::gemm_rs, 1024, 1024, 256, 4, true),
            OverlapPattern::producer_consumer);
  EXPECT_EQ(ops::resolve_overlap(OpKind::gemm_ar, 8192, 1024, 16, 4, true),
            OverlapPattern::producer_consumer);
  EXPECT_EQ(ops::resolve_overlap(OpKind::gemm_ar, 1024, 1024, 256, 4, true),
            OverlapPattern::fused_sequential);
  // Unmapped peers keep the kernels that push through the proxy, whatever the size.
  EXPECT_EQ(ops::resolve_overlap(OpKind::gemm_rs, 64, 64, 64, 2, false),
            OverlapPattern::fused_sequential);
  EXPECT_EQ(ops::resolve_overlap(OpKind::ag_gemm, 64, 64, 64, 2, false),
            OverlapPattern::workgroup_specialized);
  // A direction fixed by the caller keeps a fused pattern even below the threshold.
  EXPECT_EQ(ops::resolve_fused_overlap(OpKind::gemm_rs, 64, 64, 64, 4),
            OverlapPattern::producer_consumer);
  EXPECT_EQ(ops::resolve_overlap(OpKind::all_reduce_rmsnorm, 8, 1024, 2, 4, true),
            OverlapPattern::fused_sequential);
  EXPECT_EQ(ops::resolve_overlap(OpKind::all_reduce_rmsnorm, 4096, 4096, 2, 4, true),
            OverlapPattern::bulk_synchronous);
}

TEST(FusedOps, RejectBadArguments) {
  run_pes(2, [](Runtime& rt) {
    ops::GemmArOptions bulk_push;
    bulk_push.pattern = OverlapPattern::bulk_synchronous;
    bulk_push.direction = CommDirection::push;
    expect_invalid([&] { ops::GemmAr(rt, 4, 4, 4, GemmDtype::f32, bulk_push); },
                   "gemm_ar: direction push does not apply to bulk_synchronous");
    ops::GemmAsOptions bulk_pull;
    bulk_pull.pattern = OverlapPattern::bulk_synchronous;
    bulk_pull.direction = CommDirection::pull;
    expect_invalid([&] { ops::GemmAs(rt, 4, 4, 4, GemmDtype::f32, bulk_pull); },
                   "gemm_as: direction pull does not apply to bulk_synchronous");
    ops::GemmRsOptions rs_bulk;
    rs_bulk.pattern = OverlapPattern::bulk_synchronous;
    rs_bulk.direction = CommDirection::pull;
    expect_invalid([&] { ops::GemmRs(rt, 4, 4, 4, GemmDtype::f32, rs_bulk); },
                   "gemm_rs: direction pull does not apply to bulk_synchronous");
    ops::AgGemmOptions ag_bulk;
    ag_bulk.pattern = OverlapPattern::bulk_synchronous;
    ag_bulk.variant = ops::AgGemmVariant::pull;
    expect_invalid([&] { ops::AgGemm(rt, 4, 4, 4, GemmDtype::f32, ag_bulk); },
                   "ag_gemm: variant pull does not apply to bulk_synchronous");
    ops::GemmRsOptions rs_comm;
    rs_comm.comm_blocks = 0;
    expect_invalid([&] { ops::GemmRs(rt, 4, 4, 4, GemmDtype::f32, rs_comm); },
                   "comm_blocks must be at least 1, got 0");

    expect_invalid([&] { ops::GemmAr(rt, 0, 4, 4, GemmDtype::f32); },
                   "gemm_ar: shape must be non-zero, got m=0 n=4 k_local=4");
    expect_invalid([&] { ops::GemmAs(rt, 4, 0, 4, GemmDtype::f32); },
                   "gemm_as: shape must be non-zero, got m=4 n_local=0 k=4");
    ops::GemmArOptions no_comm;
    no_comm.comm_blocks = 0;
    expect_invalid([&] { ops::GemmAr(rt, 4, 4, 4, GemmDtype::f32, no_comm); },
                   "comm_blocks and compute_blocks must be at least 1, got 0 and 3");
    // A tile with one side 0 (0 x 0 is the backend's default).
    const std::string half_tile =
        "tile_m and tile_n must both be 0 (the backend's default tile) or both at least 1, got ";
    ops::GemmAsOptions as_tile;
    as_tile.tile_m = 4;
    expect_invalid([&] { ops::GemmAs(rt, 4, 4, 4, GemmDtype::f32, as_tile); },
                   "gemm_as: " + half_tile + "4 and 0");
    ops::GemmArOptions ar_tile;
    ar_tile.tile_n = 8;
    expect_invalid([&] { ops::GemmAr(rt, 4, 4, 4, GemmDtype::f32, ar_tile); },
                   "gemm_ar: " + half_tile + "0 and 8");
    ops::GemmRsOptions rs_tile;
    rs_tile.tile_m = 2;
    expect_invalid([&] { ops::GemmRs(rt, 4, 4, 4, GemmDtype::f32, rs_tile); },
                   "gemm_rs: " + half_tile + "2 and 0");
    ops::AgGemmOptions ag_tile;
    ag_tile.tile_n = 16;
    expect_invalid([&] { ops::AgGemm(rt, 4, 4, 4, GemmDtype::f32, ag_tile); },
                   "ag_gemm: " + half_tile + "0 and 16");
    ops::AgGemmOptions no_chunk;
    no_chunk.chunk_rows = 0;
    expect_invalid([&] { ops::AgGemm(rt, 4, 4, 4, GemmDtype::f32, no_chunk); },
                   "ag_gemm: chunk_rows must be at least 1");

    ops::GemmAr ar(rt, 4, 4, 4, GemmDtype::bf16);
    std::vector<float> a(16), b(16), c(16);
    std::vector<device::bf16> a16(16), b16(16);
    expect_invalid([&] { ar.run(rt.stream(), a.data(), b.data(), c.data()); },
                   "gemm_ar: dtype mismatch: constructed for bf16 inputs, called with f32");
    expect_invalid([&] { ar.run(rt.stream(), nullptr, b16.data(), c.data()); }, "null a on PE");
    ops::GemmAs as(rt, 4, 4, 4, GemmDtype::f32);
    std::vector<float> c_all(4 * 4 * 2);
    expect_invalid([&] { as.run(rt.stream(), a16.data(), b16.data(), c_all.data()); },
                   "gemm_as: dtype mismatch: constructed for f32 inputs, called with bf16");
    expect_invalid([&] { as.run(rt.stream(), a.data(), b.data(), nullptr); }, "null c on PE");

    // ag_gemm's bulk pattern gathers from a_shard: one that runs past the heap's end is refused.
    ops::AgGemmOptions ag_b;
    ag_b.pattern = OverlapPattern::bulk_synchronous;
    ops::AgGemm ag(rt, 4, 4, 4, GemmDtype::f32, ag_b);
    auto* tail = static_cast<float*>(rt.heap_base()) + rt.heap_size() / sizeof(float) - 2;
    expect_invalid([&] { ag.run(rt.stream(), tail, b.data(), c.data()); }, "past the heap");
    rt.stream().synchronize();
  });
}

// AgGemmOptions::direction is the variant's other name (the family's FusedGemmOptions field).
TEST(AgGemm, DirectionNamesTheVariant) {
  run_pes(2, [](Runtime& rt) {
    ops::AgGemmOptions o;
    o.pattern = OverlapPattern::workgroup_specialized;
    o.direction = CommDirection::push;
    ops::AgGemm push(rt, 4, 4, 4, GemmDtype::f32, o);
    EXPECT_EQ(push.variant(), ops::AgGemmVariant::push);
    EXPECT_EQ(push.direction(), CommDirection::push);
    o.direction = CommDirection::pull;
    ops::AgGemm pull(rt, 4, 4, 4, GemmDtype::f32, o);
    EXPECT_EQ(pull.variant(), ops::AgGemmVariant::pull);
    EXPECT_EQ(pull.direction(), CommDirection::pull);
    o.variant = ops::AgGemmVariant::push;
    expect_invalid([&] { ops::AgGemm(rt, 4, 4, 4, GemmDtype::f32, o); },
                   "ag_gemm: variant push and direction pull disagree");
    rt.stream().synchronize();
  });
}

// --- all_reduce_rmsnorm ---

template <class T>
T from_float(float v) {
  if constexpr (std::is_same_v<T, device::bf16>) {
    return device::to_bf16(v);
  } else if constexpr (std::is_same_v<T, device::half>) {
    return device::to_half(v);
  } else {
    return v;
  }
}

// rows x cols values in [-1, 1) rounded to T, as floats.
template <class T>
std::vector<float> random_rounded(std::size_t count, std::uint64_t s) {
  std::vector<float> v = random_matrix(1, count, s, false);
  for (float& x : v) x = device::to_float(from_float<T>(x));
  return v;
}

struct NormCase {
  ops::Dtype dtype;
  OverlapPattern pattern;
  int pes;
  int calls = 20;
  int alias = 0;                  // 0: y separate, 1: y == x, 2: y == residual
  std::uint32_t slow_pe1_us = 0;  // PE 1's stream spins this long before each call
};

template <class T>
void run_rmsnorm_typed(Runtime& rt, const Team& team, const NormCase& tc) {
  const int me = rt.pe(), n_pes = rt.n_pes();
  const std::size_t rows = 7, hidden = 37;
  const float eps = 1e-5f;
  const double bound = std::is_same_v<T, float>          ? 1e-5
                       : std::is_same_v<T, device::bf16> ? 2e-2
                                                         : 4e-3;
  std::vector<T> x(rows * hidden), res(rows * hidden), w(hidden), y(rows * hidden);
  for (int call = 0; call < tc.calls; ++call) {
    std::vector<double> sum(rows * hidden, 0.0);
    std::vector<float> mine;
    for (int p = 0; p < n_pes; ++p) {
      const auto xp = random_rounded<T>(rows * hidden, seed(p, call, 20));
      for (std::size_t i = 0; i < xp.size(); ++i) sum[i] += xp[i];
      if (p == me) mine = xp;
    }
    const auto rf = random_rounded<T>(rows * hidden, seed(me, call, 21));
    const auto wf = random_rounded<T>(hidden, seed(0, call, 22));
    for (std::size_t i = 0; i < x.size(); ++i) {
      x[i] = from_float<T>(mine[i]);
      res[i] = from_float<T>(rf[i]);
    }
    for (std::size_t j = 0; j < hidden; ++j) w[j] = from_float<T>(wf[j]);
    T* out = tc.alias == 1 ? x.data() : tc.alias == 2 ? res.data() : y.data();
    if (me == 1 && tc.slow_pe1_us > 0) {
      rt.stream().enqueue([us = tc.slow_pe1_us] { device::ops::detail::delay_us(us); });
    }
    ops::all_reduce_rmsnorm(rt, rt.stream(), team, x.data(), res.data(), w.data(), out, rows,
                            hidden, tc.dtype, eps, tc.pattern);
    rt.stream().synchronize();
    std::vector<double> want(rows * hidden);
    for (std::size_t r = 0; r < rows; ++r) {
      double sq = 0;
      for (std::size_t j = 0; j < hidden; ++j) {
        const double v = sum[r * hidden + j] + rf[r * hidden + j];
        sq += v * v;
      }
      const double inv = 1.0 / std::sqrt(sq / static_cast<double>(hidden) + eps);
      for (std::size_t j = 0; j < hidden; ++j) {
        want[r * hidden + j] = (sum[r * hidden + j] + rf[r * hidden + j]) * inv * wf[j];
      }
    }
    std::vector<float> got(rows * hidden);
    for (std::size_t i = 0; i < got.size(); ++i) got[i] = device::to_float(out[i]);
    ASSERT_LE(relative_error(got.data(), want), bound)
        << ops::to_string(tc.dtype) << " " << ops::to_string(tc.pattern) << " PE " << me << " call "
        << call;
  }
}

void run_rmsnorm(const NormCase& tc) {
  run_pes(tc.pes, [&](Runtime& rt) {
    const Team team = team_world(rt);
    switch (tc.dtype) {
      case ops::Dtype::f32:
        run_rmsnorm_typed<float>(rt, team, tc);
        return;
      case ops::Dtype::bf16:
        run_rmsnorm_typed<device::bf16>(rt, team, tc);
        return;
      default:
        run_rmsnorm_typed<device::half>(rt, team, tc);
        return;
    }
  });
}

using NormParam = std::tuple<ops::Dtype, OverlapPattern, int>;
class AllReduceRmsnormPes : public ::testing::TestWithParam<NormParam> {};

INSTANTIATE_TEST_SUITE_P(All, AllReduceRmsnormPes,
                         ::testing::Combine(::testing::Values(ops::Dtype::f32, ops::Dtype::bf16,
                                                              ops::Dtype::f16),
                                            ::testing::Values(OverlapPattern::bulk_synchronous,
                                                              OverlapPattern::fused_sequential,
                                                              OverlapPattern::automatic),
                                            ::testing::Range(1, 6)),
                         norm_param_name);

TEST_P(AllReduceRmsnormPes, MatchesReferenceOverTwentyCalls) {
  const auto [dtype, pattern, pes] = GetParam();
  run_rmsnorm({dtype, pattern, pes});
}

using NormVariant = std::tuple<ops::Dtype, OverlapPattern>;
class AllReduceRmsnormAliasing : public ::testing::TestWithParam<NormVariant> {};
INSTANTIATE_TEST_SUITE_P(All, AllReduceRmsnormAliasing,
                         ::testing::Combine(::testing::Values(ops::Dtype::f32, ops::Dtype::bf16,
                                                              ops::Dtype::f16),
                                            ::testing::Values(OverlapPattern::bulk_synchronous,
                                                              OverlapPattern::fused_sequential)),
                         [](const ::testing::TestParamInfo<NormVariant>& p) {
                           return std::string(ops::to_string(std::get<0>(p.param))) + "_" +
                                  ops::to_string(std::get<1>(p.param));
                         });

TEST_P(AllReduceRmsnormAliasing, InPlaceOverXAndOverResidual) {
  const auto [dtype, pattern] = GetParam();
  run_rmsnorm({dtype, pattern, 3, 3, 1});
  run_rmsnorm({dtype, pattern, 3, 3, 2});
}

// PE 1 enters every call 5 ms late: the other members must wait for its rows (fused: its flags;
// bulk: the all_reduce's), or they normalise stale staging and the result is wrong.
TEST(AllReduceRmsnorm, MembersWaitForASlowMember) {
  for (OverlapPattern p : {OverlapPattern::bulk_synchronous, OverlapPattern::fused_sequential}) {
    run_rmsnorm({ops::Dtype::f32, p, 3, 3, 0, 5000});
  }
}

TEST(AllReduceRmsnorm, RejectsBadArguments) {
  run_pes(2, [](Runtime& rt) {
    const Team team = team_world(rt);
    std::vector<float> x(8), r(8), w(4), y(8);
    auto call = [&](ops::Dtype dtype, OverlapPattern pattern, const void* xp, float eps,
                    std::size_t rows) {
      ops::all_reduce_rmsnorm(rt, rt.stream(), team, xp, r.data(), w.data(), y.data(), rows, 4,
                              dtype, eps, pattern);
    };
    expect_invalid(
        [&] { call(ops::Dtype::f32, OverlapPattern::producer_consumer, x.data(), 1e-6f, 2); },
        "all_reduce_rmsnorm: pattern producer_consumer does not apply");
    expect_invalid(
        [&] { call(ops::Dtype::f32, OverlapPattern::workgroup_specialized, x.data(), 1e-6f, 2); },
        "all_reduce_rmsnorm: pattern workgroup_specialized does not apply");
    expect_invalid([&] { call(ops::Dtype::i32, OverlapPattern::automatic, x.data(), 1e-6f, 2); },
                   "dtype i32 is not a floating type (f32, bf16, f16)");
    expect_invalid([&] { call(ops::Dtype::f32, OverlapPattern::automatic, x.data(), 1e-6f, 0); },
                   "shape must be non-zero, got rows=0 hidden=4");
    expect_invalid([&] { call(ops::Dtype::f32, OverlapPattern::automatic, nullptr, 1e-6f, 2); },
                   "null x on PE");
    expect_invalid([&] { call(ops::Dtype::f32, OverlapPattern::automatic, x.data(), 0.0f, 2); },
                   "eps must be positive");
    const Team first = team_split_strided(rt, team, 0, 1, 1);
    if (rt.pe() == 0) {
      expect_invalid(
          [&] {
            ops::all_reduce_rmsnorm(rt, rt.stream(), first, x.data(), r.data(), w.data(), y.data(),
                                    2, 4, ops::Dtype::f32);
          },
          "teams smaller than the job (1 of 2 PEs) are not supported yet");
    } else {
      expect_invalid(
          [&] {
            ops::all_reduce_rmsnorm(rt, rt.stream(), first, x.data(), r.data(), w.data(), y.data(),
                                    2, 4, ops::Dtype::f32);
          },
          "this PE is not a member of the team");
    }
  });
}

// --- Stream::wait_for ---

TEST(StreamWaitFor, LaterWorkWaitsForTheOtherStreamsEarlierWork) {
  Stream a(0), b(0);
  std::atomic<bool> release{false}, done_on_b{false};
  bool seen = false;
  b.enqueue([&] {
    // Held until the test lets go, so a's task can only run after it if wait_for orders them.
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!release.load() && std::chrono::steady_clock::now() < until) std::this_thread::yield();
    done_on_b = true;
  });
  a.wait_for(b);
  a.enqueue([&] { seen = done_on_b.load(); });
  release = true;
  a.synchronize();
  EXPECT_TRUE(seen);
  b.synchronize();
}

TEST(StreamWaitFor, TheWaitingStreamReportsTheOthersFailure) {
  Stream a(1), b(1);
  b.enqueue([] { throw Error(ErrorCode::invalid_argument, 1, "failed on the second stream"); });
  a.wait_for(b);
  bool ran_after = false;
  a.enqueue([&] { ran_after = true; });
  expect_invalid([&] { a.synchronize(); }, "failed on the second stream");
  EXPECT_FALSE(ran_after);
  // The failure moved: b runs its later work again and reports nothing.
  bool b_runs = false;
  b.enqueue([&] { b_runs = true; });
  b.synchronize();
  EXPECT_TRUE(b_runs);
}

}  // namespace
}  // namespace tessera::gemm_test
