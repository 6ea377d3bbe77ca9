// MoE dispatch + combine, all_reduce_rmsnorm and all_gather captured once and replayed 1,000
// times with fresh inputs (moe_cases.hpp), on 2 and 4 PEs as threads, each also with one PE
// delayed before every replay; and the first call on a new buffer or shape, which does host work,
// refusing the capture with a message that says what to do.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "harness/expect_error.hpp"
#include "harness/run_pes.hpp"
#include "moe_cases.hpp"

namespace tessera::graphs_test {
namespace {

using ops::AllGatherAlgo;
using ops::OverlapPattern;
using ::testing::HasSubstr;

ReplayOptions delayed() {
  ReplayOptions o;
  o.replays = 100;
  o.delayed_pe = 1;
  o.delay = std::chrono::microseconds(200);
  return o;
}

// Sets TESSERA_CORES (which sizes MoE prefill grids) for a scope.
struct CoresForTest {
  explicit CoresForTest(const char* value) { ::setenv("TESSERA_CORES", value, 1); }
  ~CoresForTest() { ::unsetenv("TESSERA_CORES"); }
  CoresForTest(const CoresForTest&) = delete;
  CoresForTest& operator=(const CoresForTest&) = delete;
};

TEST(MoeUnderReplay, DispatchAndCombineReplay1000TimesWithFreshRouting) {
  for (int n : {2, 4}) {
    harness::run_pes(n, [](Runtime& rt) { replay_moe(rt, MoeReplayCase{}, {}); });
  }
}

TEST(MoeUnderReplay, Bf16WithInt64RoutingReplays1000Times) {
  MoeReplayCase c;
  c.dtype = ops::MoeDtype::bf16;
  c.topk = 3;
  harness::run_pes(2, [&](Runtime& rt) { replay_moe(rt, c, {}); });
}

// Above kMoeDecodeTokens every call runs several blocks, which must agree on the call's epoch.
TEST(MoeUnderReplay, MultiBlockPrefillGridReplays) {
  const CoresForTest cores("8");
  MoeReplayCase c;
  c.tokens = ops::MoeBuffer::kMoeDecodeTokens + 8;
  c.hidden = 4;
  ReplayOptions o;
  o.replays = 300;
  harness::run_pes(2, [&](Runtime& rt) {
    EXPECT_GT(ops::MoeBuffer(rt, moe_config(c, rt.n_pes())).blocks_for(c.tokens), 1);
    replay_moe(rt, c, o);
  });
}

TEST(MoeUnderReplay, ReplaysWithOnePeDelayed) {
  harness::run_pes(2, [](Runtime& rt) { replay_moe(rt, MoeReplayCase{}, delayed()); });
}

TEST(AllReduceRmsnormUnderReplay, FusedSequentialReplays1000Times) {
  for (int n : {2, 4}) {
    harness::run_pes(n, [](Runtime& rt) {
      replay_all_reduce_rmsnorm(rt, OverlapPattern::fused_sequential, {});
    });
  }
}

TEST(AllReduceRmsnormUnderReplay, BulkSynchronousReplays1000Times) {
  for (int n : {2, 4}) {
    harness::run_pes(n, [](Runtime& rt) {
      replay_all_reduce_rmsnorm(rt, OverlapPattern::bulk_synchronous, {});
    });
  }
}

TEST(AllReduceRmsnormUnderReplay, ReplaysWithOnePeDelayed) {
  harness::run_pes(2, [](Runtime& rt) {
    replay_all_reduce_rmsnorm(rt, OverlapPattern::fused_sequential, delayed());
  });
}

TEST(AllGatherUnderReplay, OneShotReplays1000Times) {
  // Two PEs: straight into recv at any size; four: above kAllGatherStagedMax (fewer replays: each
  // moves 4 x 64 KiB per PE).
  harness::run_pes(2, [](Runtime& rt) { replay_all_gather(rt, AllGatherAlgo::oneshot, 200, {}); });
  ReplayOptions big;
  big.replays = 250;
  harness::run_pes(4, [&](Runtime& rt) {
    replay_all_gather(rt, AllGatherAlgo::oneshot, ops::kAllGatherStagedMax + 64, big);
  });
}

TEST(AllGatherUnderReplay, StagedOneShotReplays1000Times) {
  harness::run_pes(4, [](Runtime& rt) { replay_all_gather(rt, AllGatherAlgo::oneshot, 200, {}); });
}

TEST(AllGatherUnderReplay, RingReplays1000Times) {
  for (int n : {2, 4}) {
    harness::run_pes(n, [](Runtime& rt) { replay_all_gather(rt, AllGatherAlgo::ring, 300, {}); });
  }
}

TEST(AllGatherUnderReplay, ReplaysWithOnePeDelayed) {
  for (AllGatherAlgo algo : {AllGatherAlgo::oneshot, AllGatherAlgo::ring}) {
    harness::run_pes(4, [&](Runtime& rt) { replay_all_gather(rt, algo, 200, delayed()); });
  }
}

TEST(AllGatherUnderReplay, FirstCallOnANewBufferRefusesTheCapture) {
  harness::run_pes(2, [](Runtime& rt) {
    auto recv = rt.alloc<std::uint8_t>(2 * 64);
    std::vector<std::uint8_t> send(64, 1);
    Stream& s = rt.stream();
    s.begin_capture();
    const Error e = harness::expect_error(
        ErrorCode::invalid_argument, [&] { ops::all_gather(rt, s, send.data(), recv.get(), 64); });
    EXPECT_THAT(e.what(), HasSubstr("all_gather"));
    EXPECT_THAT(e.what(), HasSubstr("first on its recv buffer"));
    EXPECT_THAT(e.what(), HasSubstr("once before begin_capture"));
    EXPECT_EQ(s.end_capture().size(), 0u) << "the refused call enqueued work";
    // Made once outside the capture, the same call is captured and replays.
    ops::all_gather(rt, s, send.data(), recv.get(), 64);
    s.synchronize();
    s.begin_capture();
    ops::all_gather(rt, s, send.data(), recv.get(), 64);
    Graph g = s.end_capture();
    g.launch(s);
    s.synchronize();
    EXPECT_EQ(recv[64 * static_cast<std::size_t>(1 - rt.pe())], 1);
  });
}

TEST(AllReduceRmsnormUnderReplay, FirstCallOnANewShapeRefusesTheCapture) {
  harness::run_pes(2, [](Runtime& rt) {
    std::vector<float> x(3 * 4, 1.0f), res(3 * 4, 0.0f), w(4, 1.0f), y(3 * 4);
    Stream& s = rt.stream();
    s.begin_capture();
    const Error e = harness::expect_error(ErrorCode::invalid_argument, [&] {
      ops::all_reduce_rmsnorm(rt, s, team_world(rt), x.data(), res.data(), w.data(), y.data(), 3, 4,
                              ops::Dtype::f32, 1e-5f, OverlapPattern::fused_sequential);
    });
    EXPECT_THAT(e.what(), HasSubstr("all_reduce_rmsnorm"));
    EXPECT_THAT(e.what(), HasSubstr("once before begin_capture"));
    EXPECT_EQ(s.end_capture().size(), 0u) << "the refused call enqueued work";
  });
}

}  // namespace
}  // namespace tessera::graphs_test
