// Device teams: barrier(g, ctx, team) and team_sync over world, node and strided teams, rank
// translation between teams, and the failures a user can hit (non-member, no workspace,
// a member that never comes, a barrier entered by two groups of one PE). The typed strided-team
// case is device_suites_sync.hpp's (run by suite_runner.hpp: PEs as threads with checked mode off
// and on, or as processes); the other cases make thread PEs of their own and are skipped across
// processes.
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "device_suites_sync.hpp"
#include "suite_runner.hpp"
#include "tessera/ops/all_reduce.hpp"
#include "tessera/team.hpp"

namespace tessera::device_test {
namespace {

using harness::PeOptions;
using harness::run_pes;
using ::testing::AllOf;
using ::testing::HasSubstr;

PeOptions with_check(bool checked) {
  PeOptions o;
  o.checked = checked;
  return o;
}

// Each team's barrier orders its members' writes, teams' barriers are independent, and the world
// team's barrier follows the sub-teams', for Thread, Warp and Block: device_suites_sync.hpp
// (the same kernels run on the GPU).
class DeviceTeamBarrier : public ::testing::TestWithParam<suites::Case> {};

TEST_P(DeviceTeamBarrier, Case) { run_suite_case(GetParam()); }

INSTANTIATE_TEST_SUITE_P(Suite, DeviceTeamBarrier, ::testing::ValuesIn(suites::kTeamCases),
                         suite_case_name);

// The node team of two 2-PE "nodes": each node's PEs barrier on their own team.
TEST(DeviceTeam, NodeTeamBarrierCoversTheNodesPes) {
  TESSERA_SKIP_ACROSS_PROCESSES();
  PeOptions o;
  o.node_ids = {"a", "a", "b", "b"};
  run_pes(
      4,
      [](Runtime& rt) {
        const auto ctx = rt.device_context();
        const Team node = team_node(rt);
        ASSERT_EQ(node.size, 2);
        EXPECT_EQ(node.pe(node.my_rank), rt.pe());
        auto slot = rt.alloc<std::uint64_t>(1);
        slot[0] = 0;
        rt.barrier();
        run_kernel<td::Block>(rt, [&, ctx, node](td::Block g) {
          const int other = node.pe(1 - node.my_rank);
          for (std::uint64_t r = 1; r <= 100; ++r) {
            td::put_nbi(g, ctx, td::make_tile(slot.get(), 1),
                        td::make_tile<const std::uint64_t>(&r, 1), other);
            td::barrier(g, ctx, node);
            EXPECT_EQ(slot[0], r);
            td::team_sync(g, ctx, node);
          }
        });
        rt.barrier();
      },
      o);
}

TEST(DeviceTeam, TranslateMapsRanksBetweenTeams) {
  td::Team world{0, 1, 8, 3};
  td::Team even{0, 2, 4, -1};
  td::Team odd{1, 2, 4, 1};
  td::Team odd_tail{3, 4, 2, 0};  // ranks 1 and 3 of odd
  EXPECT_EQ(td::translate(world, 6, even), 3);
  EXPECT_EQ(td::translate(world, 5, even), -1);
  EXPECT_EQ(td::translate(even, 2, world), 4);
  EXPECT_EQ(td::translate(odd, 3, odd_tail), 1);
  EXPECT_EQ(td::translate(odd_tail, 0, odd), 1);
  EXPECT_EQ(td::translate(even, 1, odd), -1);
  EXPECT_EQ(td::translate(even, 4, world), -1);
  EXPECT_EQ(td::translate(even, -1, world), -1);
  static_assert(td::translate(td::Team{0, 2, 4, 0}, 3, td::Team{0, 1, 8, 0}) == 6);
}

TEST(DeviceTeam, MadeTeamsPutTheirBarrierWordsInsideTheirWorkspace) {
  TESSERA_SKIP_ACROSS_PROCESSES();
  run_pes(2, [](Runtime& rt) {
    const Team world = team_world(rt);
    const Team solo = team_split_strided(rt, world, 1, 1, 1);
    for (const Team& t : {world, solo}) {
      auto* words = reinterpret_cast<unsigned char*>(td::TeamBarrierWords::words(t));
      ASSERT_NE(words, nullptr);
      auto* base = static_cast<unsigned char*>(t.workspace);
      EXPECT_GE(words, base);
      EXPECT_EQ(words + td::TeamBarrierWords::bytes_for(t.size), base + t.workspace_bytes);
      EXPECT_TRUE(rt.in_heap(words));
    }
  });
}

TEST(DeviceTeam, BarrierByANonMemberIsInvalidArgument) {
  TESSERA_SKIP_ACROSS_PROCESSES();
  run_pes(2, [](Runtime& rt) {
    const auto ctx = rt.device_context();
    const Team world = team_world(rt);
    const Team second = team_split_strided(rt, world, 1, 1, 1);
    if (rt.pe() == 0) {
      launch(rt.stream(), 1, [=](td::Block g) { td::barrier(g, ctx, second); });
      Error e = expect_error(ErrorCode::invalid_argument, [&] { rt.stream().synchronize(); });
      EXPECT_THAT(e.message(),
                  AllOf(HasSubstr("barrier on team (start 1, stride 1, size 1) on PE 0"),
                        HasSubstr("not a member of the team")));
    } else {
      // A one-member team's barrier returns at once.
      run_kernel<td::Block>(rt, [=](td::Block g) { td::barrier(g, ctx, second); });
    }
    rt.barrier();
  });
}

TEST(DeviceTeam, BarrierOnATeamWithoutWorkspaceIsInvalidArgument) {
  TESSERA_SKIP_ACROSS_PROCESSES();
  run_pes(1, [](Runtime& rt) {
    const auto ctx = rt.device_context();
    const td::Team by_hand{0, 1, 1, 0};
    launch(rt.stream(), 1, [=](td::Block g) { td::team_sync(g, ctx, by_hand); });
    Error e = expect_error(ErrorCode::invalid_argument, [&] { rt.stream().synchronize(); });
    EXPECT_THAT(e.message(), AllOf(HasSubstr("team_sync on team (start 0, stride 1, size 1)"),
                                   HasSubstr("has no workspace for its barrier words")));
  });
}

// The team barrier's diagnostic names the member that never entered it, by world PE and rank.
TEST(DeviceTeam, BarrierTimesOutNamingTheMemberThatNeverCame) {
  TESSERA_SKIP_ACROSS_PROCESSES();
  run_pes(3, [](Runtime& rt) {
    auto ctx = rt.device_context();
    ctx.timeout_ns = 200'000'000;
    const Team world = team_world(rt);
    const Team outer = team_split_strided(rt, world, 0, 2, 2);  // PEs 0 and 2
    if (rt.pe() == 0) {
      launch(rt.stream(), 1, [=](td::Block g) { td::barrier(g, ctx, outer); });
      Error e = expect_error(ErrorCode::timeout, [&] { rt.stream().synchronize(); });
      EXPECT_THAT(e.message(),
                  AllOf(HasSubstr("barrier on team (start 0, stride 2, size 2) on PE 0 timed out"),
                        HasSubstr("in barrier #1"), HasSubstr("(value >= 2), saw 1"),
                        HasSubstr("not yet entered by PE 2 (team rank 1, at #0)")));
    }
    expect_error(ErrorCode::peer_lost, [&] { rt.barrier(); });
  });
}

// The team's collectives and its barrier share the workspace: all_reduce (every algorithm, on a
// sub-team) interleaved with device barriers on the same team keeps both right.
TEST(DeviceTeam, BarrierWordsAndTheTeamsCollectivesDoNotDisturbEachOther) {
  TESSERA_SKIP_ACROSS_PROCESSES();
  run_pes(4, [](Runtime& rt) {
    const auto ctx = rt.device_context();
    const Team world = team_world(rt);
    const Team even = team_split_strided(rt, world, 0, 2, 2);
    const Team odd = team_split_strided(rt, world, 1, 2, 2);
    const Team mine = rt.pe() % 2 == 0 ? even : odd;
    auto recv = rt.alloc<std::int64_t>(64);
    std::vector<std::int64_t> send(64, rt.pe() + 1);
    std::int64_t expected = 0;
    for (int r = 0; r < mine.size; ++r) expected += mine.pe(r) + 1;
    for (auto algo : {ops::AllReduceAlgo::one_shot, ops::AllReduceAlgo::two_shot,
                      ops::AllReduceAlgo::ring, ops::AllReduceAlgo::atomic}) {
      ops::all_reduce(rt, rt.stream(), mine, send.data(), recv.get(), 64, ops::Dtype::i64,
                      ops::ReduceOp::sum, algo);
      run_kernel<td::Block>(rt, [ctx, mine](td::Block g) {
        for (int i = 0; i < 20; ++i) td::barrier(g, ctx, mine);
      });
      rt.stream().synchronize();
      for (int i = 0; i < 64; ++i) ASSERT_EQ(recv[static_cast<std::size_t>(i)], expected);
    }
    rt.barrier();
  });
}

// Checked mode: a second group of one PE entering a barrier while the first is inside is
// reported, naming the call and both groups. Made certain, not likely: PE 0's block 0 enters
// (and cannot leave: PE 1 has not arrived), block 1 enters once block 0 has counted its entry,
// and only then is PE 1 let in. For the world barrier by blocks, the team barrier, and the
// world barrier by threads. (Before issue 17 the second block passed, counting as one more
// arrival, so nobody waited for anybody: silently wrong.)
TEST(DeviceTeam, CheckedBarrierEnteredByASecondGroupWhileTheFirstIsInsideIsReported) {
  TESSERA_SKIP_ACROSS_PROCESSES();
  for (int which = 0; which < 3; ++which) {
    run_pes(
        2,
        [which](Runtime& rt) {
          const auto ctx = rt.device_context();
          const Team world = team_world(rt);
          auto go = rt.alloc<std::uint64_t>(1);
          go[0] = 0;
          rt.barrier();
          std::uint64_t* entered =
              which == 1 ? td::TeamBarrierWords::words(world) + td::TeamBarrierWords::kEntered
                         : ctx.control_page + td::Context::kBarrierEntered;
          const std::uint64_t before =
              td::platform::atomic_load(entered, td::Sem::acquire, td::Scope::device);
          std::uint64_t* gate = go.get();
          auto enter = [=](td::Block g) {
            if (which == 0) td::barrier(g, ctx);
            if (which == 1) td::barrier(g, ctx, world);
            if (which == 2) td::barrier(td::Thread{}, ctx);
          };
          if (rt.pe() == 0) {
            launch(rt.stream(), 2, [=](td::Block g) {
              if (g.block_id() == 0) {
                enter(g);
                return;
              }
              while (td::platform::atomic_load(entered, td::Sem::acquire, td::Scope::device) ==
                     before)
                std::this_thread::yield();
              try {
                enter(g);
              } catch (...) {
                td::signal(ctx, gate, 1, td::SignalOp::set, 1);  // now PE 1 may come
                throw;
              }
              td::signal(ctx, gate, 1, td::SignalOp::set, 1);
            });
            Error e = expect_error(ErrorCode::invalid_argument, [&] { rt.stream().synchronize(); });
            EXPECT_THAT(e.message(),
                        AllOf(HasSubstr(which == 1 ? "barrier on team (start 0, stride 1, size 2) "
                                                     "on PE 0 entered by "
                                                   : "barrier on PE 0 entered by "),
                              HasSubstr(which == 2 ? "thread 0 of block 0 and thread 0 of block 1"
                                                   : "by block 0 and block 1"),
                              HasSubstr("a barrier is entered by one group per PE at a time")));
            EXPECT_THAT(e.message(),
                        ::testing::AnyOf(HasSubstr("of one launch"), HasSubstr("at once")));
          } else {
            launch(rt.stream(), 1, [=](td::Block g) {
              td::wait_until(g, ctx, gate, td::Cmp::ge, 1);
              enter(g);
            });
            rt.stream().synchronize();
          }
          rt.barrier();
        },
        with_check(true));
  }
}

// A rotating leader: the blocks of one launch take turns entering the barriers, each alone
// (block b waits until block b - 1 has left them). These are successive barriers, one group
// inside at a time, so checked mode lets them pass. Fails before: the check also reported a
// second group of the same launch entering after the first had left ("... of one launch").
TEST(DeviceTeam, CheckedBarrierEnteredInTurnByTheBlocksOfOneLaunchPasses) {
  TESSERA_SKIP_ACROSS_PROCESSES();
  run_pes(
      2,
      [](Runtime& rt) {
        const auto ctx = rt.device_context();
        const Team world = team_world(rt);
        auto turn = rt.alloc<std::uint64_t>(1);
        turn[0] = 0;
        rt.barrier();
        std::uint64_t* t = turn.get();
        launch(rt.stream(), 3, [=](td::Block g) {
          td::wait_until(g, ctx, t, td::Cmp::ge, static_cast<std::uint64_t>(g.block_id()));
          td::barrier(g, ctx);
          td::barrier(g, ctx, world);
          td::sync_all(g, ctx);
          if (g.rank() == 0) td::signal(ctx, t, 1, td::SignalOp::add, ctx.my_pe);
        });
        rt.stream().synchronize();
        EXPECT_EQ(td::signal_fetch(t), 3u);
        rt.barrier();
      },
      with_check(true));
}

// The same program with one group per PE, in two launches by different blocks, is fine.
TEST(DeviceTeam, CheckedBarrierByOneBlockPerLaunchPasses) {
  TESSERA_SKIP_ACROSS_PROCESSES();
  run_pes(
      2,
      [](Runtime& rt) {
        const auto ctx = rt.device_context();
        const Team world = team_world(rt);
        for (int caller = 0; caller < 3; ++caller) {
          launch(rt.stream(), 3, [=](td::Block g) {
            if (g.block_id() != caller) return;
            td::barrier(g, ctx);
            td::barrier(g, ctx, world);
            td::sync_all(g, ctx);
          });
          rt.stream().synchronize();
        }
      },
      with_check(true));
}

// The whole-job barrier's names: barrier_all is barrier; sync_all the old sync, still there as a
// deprecated alias. Each orders a plain store on one PE before the other PE's read.
TEST(DeviceBarrierNames, BarrierAllSyncAllAndTheDeprecatedSyncEachOrderStores) {
  TESSERA_SKIP_ACROSS_PROCESSES();
  run_pes(2, [](Runtime& rt) {
    const auto ctx = rt.device_context();
    auto cell = rt.alloc<std::uint64_t>(1);
    cell[0] = 0;
    rt.barrier();
    std::uint64_t* c = cell.get();
    run_kernel<td::Block>(rt, [=](td::Block g) {
      const int other = 1 - ctx.my_pe;
      for (std::uint64_t r = 1; r <= 90; ++r) {
        td::atomic_store(ctx, c, r, other, td::Sem::relaxed);
        if (r % 3 == 0) td::barrier_all(g, ctx);
        if (r % 3 == 1) td::sync_all(g, ctx);
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
        if (r % 3 == 2) td::sync(g, ctx);
#pragma GCC diagnostic pop
        EXPECT_EQ(td::atomic_load(ctx, c, ctx.my_pe, td::Sem::relaxed), r);
        td::sync_all(g, ctx);
      }
    });
    rt.barrier();
  });
}

}  // namespace
}  // namespace tessera::device_test
