// The team collectives under capture and replay, PEs as threads: every algorithm captured once
// and replayed 1,000 times on the world team and on stride-2 teams, with fresh inputs and every
// result checked; with one PE delayed; three collectives in one graph; the first call that needs
// the host agreement check refused during capture; a sub-team's mismatch and all_to_all_v's
// overflow still reported on replay.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "collectives_cases.hpp"
#include "harness/expect_error.hpp"
#include "harness/run_pes.hpp"

namespace tessera::graphs_test {
namespace {

using ::testing::HasSubstr;

// The world team, or this PE's stride-2 team (even or odd PEs).
Team team_of(Runtime& rt, bool strided) {
  const Team world = team_world(rt);
  if (!strided) return world;
  const int n = rt.n_pes();
  const Team evens = team_split_strided(rt, world, 0, 2, (n + 1) / 2);
  const Team odds = team_split_strided(rt, world, 1, 2, n / 2);
  return evens.is_member() ? evens : odds;
}

class CollectivesReplay : public ::testing::TestWithParam<int> {};

TEST_P(CollectivesReplay, EveryCollectiveOnTheWorldTeamReplays1000Times) {
  harness::run_pes(GetParam(), [](Runtime& rt) {
    replay_every_collective(rt, team_of(rt, false), ReplayOptions{});
  });
}

INSTANTIATE_TEST_SUITE_P(Pes, CollectivesReplay, ::testing::Values(2, 4),
                         [](const auto& p) { return std::to_string(p.param) + "Pes"; });

// On a stride-2 team the first call is checked on the stream: it is captured, and every replay
// checks again.
TEST(CollectivesReplayTeams, EveryCollectiveOnStride2TeamsReplays1000Times) {
  harness::run_pes(
      4, [](Runtime& rt) { replay_every_collective(rt, team_of(rt, true), ReplayOptions{}); });
}

TEST(CollectivesReplayTeams, EveryCollectiveReplaysWithOnePeDelayed) {
  ReplayOptions opts;
  opts.replays = 100;
  opts.delayed_pe = 1;
  opts.delay = std::chrono::microseconds(200);
  harness::run_pes(3, [&](Runtime& rt) { replay_every_collective(rt, team_of(rt, false), opts); });
}

TEST(CollectivesReplayTeams, ThreeCollectivesInOneGraph) {
  harness::run_pes(4, [](Runtime& rt) { replay_three_collectives(rt, ReplayOptions{}); });
}

// The first call of a combination on a team spanning the job is checked collectively on the
// host: during a capture it is refused with the remedy, nothing is enqueued, and the same call
// made once outside the capture can then be captured.
TEST(CollectivesCapture, AFirstCallNeedingTheHostCheckIsRefusedNamingTheOpAndTheRemedy) {
  harness::run_pes(2, [](Runtime& rt) {
    const Team team = team_world(rt);
    std::vector<float> send(64, 1.0f);
    auto recv = rt.alloc<float>(64);
    Stream& s = rt.stream();
    s.begin_capture();
    const Error e = harness::expect_error(ErrorCode::invalid_argument, [&] {
      ops::all_reduce(rt, s, team, send.data(), recv.get(), 64, ops::Dtype::f32,
                      ops::ReduceOp::sum);
    });
    EXPECT_THAT(e.what(), HasSubstr("all_reduce: cannot be captured"));
    EXPECT_THAT(e.what(), HasSubstr("make the same call once before begin_capture"));
    Graph empty = s.end_capture();
    EXPECT_EQ(empty.size(), 0u);
    replay_all_reduce(rt, team, ops::AllReduceAlgo::one_shot, ReplayOptions{.replays = 10});
  });
}

// A sub-team's agreement check runs on the stream, so a captured call in which the members
// disagree fails on every replay, reported by synchronize on every member.
TEST(CollectivesCapture, ASubTeamMismatchIsReportedOnEveryReplay) {
  harness::run_pes(4, [](Runtime& rt) {
    const Team team = team_of(rt, true);
    const std::size_t count = team.my_rank == 0 ? 32 : 33;
    std::vector<float> send(64, 1.0f);
    auto recv = rt.alloc<float>(64);
    Stream& s = rt.stream();
    s.begin_capture();
    ops::all_reduce(rt, s, team, send.data(), recv.get(), count, ops::Dtype::f32,
                    ops::ReduceOp::sum);
    Graph graph = s.end_capture();
    for (int r = 0; r < 3; ++r) {
      graph.launch(s);
      EXPECT_THAT(
          harness::expect_error(ErrorCode::invalid_argument, [&] { s.synchronize(); }).what(),
          HasSubstr("PEs made different collective calls"));
    }
  });
}

// all_to_all_v reads its counts on the stream: a replay whose counts overflow a member's
// capacity fails on every member, and the next replay with counts that fit is right.
TEST(CollectivesCapture, AllToAllVOverflowIsReportedOnReplayAndTheTeamStaysUsable) {
  harness::run_pes(3, [](Runtime& rt) {
    const Team team = team_world(rt);
    AllToAllV a{rt, team};
    Stream& s = rt.stream();
    a.write(0);
    a.call(s);
    s.synchronize();
    s.begin_capture();
    a.call(s);
    Graph graph = s.end_capture();
    for (int r = 1; r <= 6; ++r) {
      a.write(r);
      if (r == 3 && rt.pe() == 0) a.send_counts[1] = 4 * kMaxBlock;  // past rank 1's capacity
      graph.launch(s);
      if (r == 3) {
        EXPECT_THAT(
            harness::expect_error(ErrorCode::invalid_argument, [&] { s.synchronize(); }).what(),
            HasSubstr("capacity"));
        continue;
      }
      s.synchronize();
      EXPECT_EQ(a.check(r), "") << "replay " << r;
    }
  });
}

}  // namespace
}  // namespace tessera::graphs_test
