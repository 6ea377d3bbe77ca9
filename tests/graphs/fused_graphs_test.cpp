// The fused GEMM ops under capture and replay (fused_cases.hpp): every op in every pattern and
// direction, one call captured and replayed 1,000 times on 2 and 4 PEs (threads), with fresh
// inputs before each replay and every element of C checked after it; bf16 inputs in each
// pattern; every case with one PE 200 us late into each replay (100 replays), so the others
// reach the op's waits first; and the one first call that refuses capture.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <tuple>
#include <vector>

#include "fused_cases.hpp"
#include "harness/run_pes.hpp"

namespace tessera::graphs_test {
namespace {

enum class Op { ag_gemm, gemm_rs, gemm_ar, gemm_as };

const char* name_of(Op op) {
  switch (op) {
    case Op::ag_gemm:
      return "ag_gemm";
    case Op::gemm_rs:
      return "gemm_rs";
    case Op::gemm_ar:
      return "gemm_ar";
    case Op::gemm_as:
      return "gemm_as";
  }
  return "?";
}

void replay(Op op, int pes, int variant, const ReplayOptions& o, bool bf16 = false) {
  const FusedVariant& v = kFusedVariants[variant];
  harness::run_pes(pes, [&](Runtime& rt) {
    try {
      switch (op) {
        case Op::ag_gemm:
          replay_ag_gemm(rt, v, o, bf16);
          return;
        case Op::gemm_rs:
          replay_gemm_rs(rt, v, o, bf16);
          return;
        case Op::gemm_ar:
          replay_gemm_ar(rt, v, o, bf16);
          return;
        case Op::gemm_as:
          replay_gemm_as(rt, v, o, bf16);
          return;
      }
    } catch (const ReplayFailure& e) {
      ADD_FAILURE() << e.what();
      throw;
    }
  });
}

using Param = std::tuple<Op, int /*variant*/>;

std::string param_name(const ::testing::TestParamInfo<Param>& info) {
  const auto [op, v] = info.param;
  return std::string(name_of(op)) + "_" + to_string(kFusedVariants[v]);
}

class FusedReplay : public ::testing::TestWithParam<Param> {};

INSTANTIATE_TEST_SUITE_P(All, FusedReplay,
                         ::testing::Combine(::testing::Values(Op::ag_gemm, Op::gemm_rs, Op::gemm_ar,
                                                              Op::gemm_as),
                                            ::testing::Range(0, 7)),
                         param_name);

TEST_P(FusedReplay, EveryReplayMatchesReferenceOnTwoPes) {
  const auto [op, v] = GetParam();
  replay(op, 2, v, {});
}

TEST_P(FusedReplay, EveryReplayMatchesReferenceOnFourPes) {
  const auto [op, v] = GetParam();
  replay(op, 4, v, {});
}

TEST_P(FusedReplay, Bf16InputsReplayExactlyOnThreePes) {
  const auto [op, v] = GetParam();
  ReplayOptions o;
  o.replays = 200;
  replay(op, 3, v, o, true);
}

TEST_P(FusedReplay, ReplaysStayRightWithOnePeLate) {
  const auto [op, v] = GetParam();
  ReplayOptions o;
  o.replays = 100;
  o.delayed_pe = 1;
  o.delay = std::chrono::microseconds(200);
  replay(op, 2, v, o);
}

// bulk_synchronous gemm_ar's first call makes its all-reduce's host agreement check: captured,
// it says so (and what to do) instead of recording a call that would replay wrong.
TEST(FusedCapture, FirstBulkGemmArCallRefusesCaptureThenLaterCallsReplay) {
  harness::run_pes(2, [](Runtime& rt) {
    ops::GemmArOptions o;
    o.pattern = ops::OverlapPattern::bulk_synchronous;
    ops::GemmAr op(rt, 4, 4, 4, ops::GemmDtype::f32, o);
    const std::vector<float> a(16, 1.0f), b(16, 1.0f);
    std::vector<float> c(16, 0.0f);
    Stream& stream = rt.stream();
    stream.begin_capture();
    try {
      op.run(stream, a.data(), b.data(), c.data());
      ADD_FAILURE() << "the first call was captured";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
      EXPECT_NE(std::string(e.what()).find("cannot be captured"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("before begin_capture"), std::string::npos) << e.what();
    }
    (void)stream.end_capture();
    ReplayOptions r;
    r.replays = 10;
    replay_gemm_ar(rt, kFusedVariants[0], r);
  });
}

}  // namespace
}  // namespace tessera::graphs_test
