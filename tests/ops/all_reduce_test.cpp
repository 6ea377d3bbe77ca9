// tessera::ops::all_reduce and the Team it runs on, against a double-precision reference: 1 to
// 5 PEs, the world and stride-2 teams, counts that are multiples of nothing (1, 7, 4093, 1 Mi
// for a few combinations), every dtype and op, in place and out of place, every algorithm, 20
// calls in a row with fresh data and no reset, the device block in a user kernel, and the
// argument checks.
#include "tessera/ops/all_reduce.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "harness/run_pes.hpp"
#include "harness/sanitized.hpp"
#include "reduce_reference.hpp"
#include "tessera/launch.hpp"
#include "tessera/team.hpp"

namespace tessera::ops_test {
namespace {

namespace td = tessera::device;
using harness::run_pes;
using ops::AllReduceAlgo;
using ops::Dtype;
using ops::ReduceOp;
using ops_reference::load;
using ops_reference::reduce;
using ops_reference::store;

constexpr Dtype kDtypes[] = {Dtype::f32, Dtype::bf16, Dtype::f16, Dtype::i32, Dtype::i64};
constexpr ReduceOp kOps[] = {ReduceOp::sum, ReduceOp::max, ReduceOp::min, ReduceOp::prod};

// Whether the op call is valid (prod is for integers; atomic only sums i32, i64 and f32).
bool supported(AllReduceAlgo algo, Dtype dtype, ReduceOp op) {
  const bool integer = dtype == Dtype::i32 || dtype == Dtype::i64;
  if (op == ReduceOp::prod && !integer) return false;
  if (algo == AllReduceAlgo::atomic) {
    return op == ReduceOp::sum && (integer || dtype == Dtype::f32);
  }
  return true;
}

// Element i of world PE `pe`'s contribution to call `call` (tests/ops/reduce_reference.hpp).
double contribution(std::uint64_t seed, int pe, std::uint64_t call, std::size_t i, ReduceOp op) {
  return ops_reference::value(seed, pe, call, i, op, 50);
}

// Fills `buf` with this PE's contribution.
void fill(Dtype dtype, void* buf, std::size_t count, std::uint64_t seed, int pe, std::uint64_t call,
          ReduceOp op) {
  for (std::size_t i = 0; i < count; ++i) store(dtype, buf, i, contribution(seed, pe, call, i, op));
}

// Where `got` first differs from the reduction over `team`'s members, or "" when it matches.
std::string first_mismatch(const Team& team, Dtype dtype, ReduceOp op, const void* got,
                           std::size_t count, std::uint64_t seed, std::uint64_t call) {
  for (std::size_t i = 0; i < count; ++i) {
    double want = contribution(seed, team.pe(0), call, i, op);
    for (int j = 1; j < team.n_pes(); ++j) {
      want = reduce(op, want, contribution(seed, team.pe(j), call, i, op));
    }
    const double seen = load(dtype, got, i);
    if (seen != want) {
      return std::string(ops::to_string(dtype)) + " " + ops::to_string(op) + " count " +
             std::to_string(count) + " call " + std::to_string(call) + ": element " +
             std::to_string(i) + " is " + std::to_string(seen) + ", expected " +
             std::to_string(want);
    }
  }
  return "";
}

// One all-reduce of fresh data on `team`, checked on return; in place or from a local buffer.
void reduce_and_check(Runtime& rt, const Team& team, void* recv, std::size_t count, Dtype dtype,
                      ReduceOp op, AllReduceAlgo algo, bool in_place, std::uint64_t seed,
                      std::uint64_t call) {
  std::vector<unsigned char> send(count * ops::size_of(dtype));
  void* src = in_place ? recv : static_cast<void*>(send.data());
  fill(dtype, src, count, seed, rt.pe(), call, op);
  ops::all_reduce(rt, rt.stream(), team, src, recv, count, dtype, op, algo);
  rt.stream().synchronize();
  ASSERT_EQ(first_mismatch(team, dtype, op, recv, count, seed, call), "")
      << "on PE " << rt.pe() << ", " << ops::to_string(algo) << (in_place ? ", in place" : "");
}

// Every supported dtype/op pair for `algo` at every count, alternating in place and out of place.
void sweep(Runtime& rt, const Team& team, void* recv, AllReduceAlgo algo,
           const std::vector<std::size_t>& counts, std::uint64_t seed) {
  std::uint64_t call = 0;
  for (std::size_t count : counts) {
    for (Dtype dtype : kDtypes) {
      for (ReduceOp op : kOps) {
        if (!supported(algo, dtype, op)) continue;
        ++call;
        reduce_and_check(rt, team, recv, count, dtype, op, algo, call % 2 == 0, seed, call);
        if (::testing::Test::HasFatalFailure()) return;
      }
    }
  }
}

struct Case {
  int pes;
  AllReduceAlgo algo;
};

std::string name_of(const ::testing::TestParamInfo<Case>& info) {
  return "P" + std::to_string(info.param.pes) + "_" + ops::to_string(info.param.algo);
}

class AllReduce : public ::testing::TestWithParam<Case> {};

// The world team, then each PE's stride-2 team (even and odd PEs), at counts 1, 7 and 4093.
TEST_P(AllReduce, EveryMemberGetsTheReductionForEveryDtypeOpAndCount) {
  const Case c = GetParam();
  run_pes(c.pes, [&](Runtime& rt) {
    const Team world = team_world(rt);
    const int n = rt.n_pes();
    const Team evens = team_split_strided(rt, world, 0, 2, (n + 1) / 2);
    const Team odds = n > 1 ? team_split_strided(rt, world, 1, 2, n / 2) : Team{};
    auto recv = rt.alloc<std::int64_t>(4093);
    sweep(rt, world, recv.get(), c.algo, {1, 7, 4093}, 11);
    if (::testing::Test::HasFatalFailure()) return;
    const Team& mine = evens.is_member() ? evens : odds;
    ASSERT_TRUE(mine.is_member());
    EXPECT_EQ(mine.stride, 2);
    sweep(rt, mine, recv.get(), c.algo, {7, 4093}, 12);
  });
}

std::vector<Case> all_cases() {
  std::vector<Case> cases;
  for (int pes = 1; pes <= 5; ++pes) {
    for (AllReduceAlgo algo :
         {AllReduceAlgo::automatic, AllReduceAlgo::one_shot, AllReduceAlgo::two_shot,
          AllReduceAlgo::ring, AllReduceAlgo::atomic}) {
      cases.push_back({pes, algo});
    }
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Ops, AllReduce, ::testing::ValuesIn(all_cases()), name_of);

// Spends about `us` microseconds computing (a PE that is late for reasons of its own).
void busy_work(int us) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(us);
  volatile std::uint64_t sink = 0;
  while (std::chrono::steady_clock::now() < until) sink = sink + 1;
}

// 20 calls (3 when sanitized) on one team and buffer with fresh data, no reset and no barrier
// between them, switching algorithm from call to call; faster PEs run ahead into the next call
// while slower ones still check the last result. The last PE is late every third call: before
// its call (the others must wait for its contribution) or before checking its result (the
// others' next call must not overwrite recv or staging it still reads).
TEST(AllReduceRepeated, TwentyCallsInARowNeedNoResetAndMaySwitchAlgorithm) {
  for (int pes : {3, 4}) {
    run_pes(pes, [](Runtime& rt) {
      const Team world = team_world(rt);
      auto recv = rt.alloc<float>(4093);
      const AllReduceAlgo algos[] = {AllReduceAlgo::one_shot, AllReduceAlgo::two_shot,
                                     AllReduceAlgo::ring, AllReduceAlgo::atomic};
      const std::uint64_t calls = harness::repetitions<std::uint64_t>(20, 3);
      const bool last = rt.pe() == rt.n_pes() - 1;
      for (std::uint64_t call = 1; call <= calls; ++call) {
        if (last && call % 3 == 1) busy_work(2000);
        std::vector<float> send(4093);
        float* src = call % 3 == 0 ? recv.get() : send.data();
        fill(Dtype::f32, src, 4093, 21, rt.pe(), call, ReduceOp::sum);
        ops::all_reduce(rt, rt.stream(), world, src, recv.get(), 4093, Dtype::f32, ReduceOp::sum,
                        algos[call % 4]);
        rt.stream().synchronize();
        if (last && call % 3 == 2) busy_work(2000);
        ASSERT_EQ(first_mismatch(world, Dtype::f32, ReduceOp::sum, recv.get(), 4093, 21, call), "")
            << "on PE " << rt.pe() << ", " << ops::to_string(algos[call % 4]);
      }
    });
  }
}

// 1 Mi elements: several segments per call, for a few combinations.
TEST(AllReduceLarge, MebiElementCallsSpanSeveralSegments) {
  struct Big {
    int pes;
    AllReduceAlgo algo;
    Dtype dtype;
    ReduceOp op;
    bool in_place;
  };
  const Big bigs[] = {{4, AllReduceAlgo::two_shot, Dtype::f32, ReduceOp::sum, false},
                      {3, AllReduceAlgo::ring, Dtype::bf16, ReduceOp::max, true},
                      {2, AllReduceAlgo::one_shot, Dtype::i64, ReduceOp::sum, true},
                      {4, AllReduceAlgo::automatic, Dtype::f16, ReduceOp::min, false},
                      {3, AllReduceAlgo::atomic, Dtype::i32, ReduceOp::sum, false}};
  constexpr std::size_t kCount = std::size_t{1} << 20;
  for (const Big& b : bigs) {
    run_pes(b.pes, [&](Runtime& rt) {
      const Team world = team_world(rt);
      auto recv = rt.alloc<std::int64_t>(kCount);
      for (std::uint64_t call = 1; call <= 2; ++call) {
        reduce_and_check(rt, world, recv.get(), kCount, b.dtype, b.op, b.algo, b.in_place, 31,
                         call);
        if (::testing::Test::HasFatalFailure()) return;
      }
    });
  }
}

TEST(Team, StridedTeamsTranslateRanksAndPes) {
  Team t;
  t.start = 1;
  t.stride = 2;
  t.size = 3;
  EXPECT_EQ(t.n_pes(), 3);
  EXPECT_EQ(t.pe(0), 1);
  EXPECT_EQ(t.pe(2), 5);
  EXPECT_EQ(t.rank_of(3), 1);
  EXPECT_EQ(t.rank_of(5), 2);
  EXPECT_EQ(t.rank_of(0), -1);
  EXPECT_EQ(t.rank_of(4), -1);
  EXPECT_EQ(t.rank_of(7), -1);
  run_pes(4, [](Runtime& rt) {
    const Team world = team_world(rt);
    EXPECT_EQ(world.n_pes(), 4);
    EXPECT_EQ(world.my_rank, rt.pe());
    // A split of a split composes: ranks 1 and 2 of the odd PEs {1, 3} -> {3}.
    const Team odds = team_split_strided(rt, world, 1, 2, 2);
    const Team last = team_split_strided(rt, odds, 1, 1, 1);
    EXPECT_EQ(odds.my_rank, rt.pe() % 2 == 1 ? rt.pe() / 2 : -1);
    EXPECT_EQ(last.pe(0), 3);
    EXPECT_EQ(last.is_member(), rt.pe() == 3);
  });
}

TEST(Team, NodeTeamsFollowTheNodesEvenWhenInterleaved) {
  harness::PeOptions blocks;
  blocks.node_ids = {"a", "a", "b", "b"};
  run_pes(
      4,
      [](Runtime& rt) {
        const Team node = team_node(rt);
        EXPECT_EQ(node.start, rt.pe() < 2 ? 0 : 2);
        EXPECT_EQ(node.stride, 1);
        EXPECT_EQ(node.n_pes(), 2);
        EXPECT_EQ(node.my_rank, rt.pe() % 2);
        // Each node reduces over its own PEs.
        auto recv = rt.alloc<std::int32_t>(7);
        reduce_and_check(rt, node, recv.get(), 7, Dtype::i32, ReduceOp::sum,
                         AllReduceAlgo::two_shot, false, 41, 1);
      },
      blocks);
  harness::PeOptions interleaved;
  interleaved.node_ids = {"a", "b", "a", "b"};
  run_pes(
      4,
      [](Runtime& rt) {
        const Team node = team_node(rt);
        EXPECT_EQ(node.start, rt.pe() % 2);
        EXPECT_EQ(node.stride, 2);
        EXPECT_EQ(node.my_rank, rt.pe() / 2);
      },
      interleaved);
}

// Runs fn and returns the message of the tessera::Error(invalid_argument) it throws.
template <class Fn>
std::string invalid_argument_message(Fn&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument) << e.what();
    return e.message();
  }
  ADD_FAILURE() << "expected tessera::Error(InvalidArgument)";
  return "";
}

TEST(AllReduceArguments, BadArgumentsAreRejectedWithClearErrors) {
  using ::testing::HasSubstr;
  run_pes(2, [](Runtime& rt) {
    const Team world = team_world(rt);
    const Team first = team_split_strided(rt, world, 0, 1, 1);
    auto recv = rt.alloc<float>(64);
    std::vector<float> local(64);
    Stream& s = rt.stream();
    auto call = [&](const Team& t, const void* send, void* out, std::size_t count, Dtype dtype,
                    ReduceOp op, AllReduceAlgo algo) {
      return invalid_argument_message(
          [&] { ops::all_reduce(rt, s, t, send, out, count, dtype, op, algo); });
    };
    const auto one = AllReduceAlgo::one_shot;
    EXPECT_THAT(call(world, local.data(), recv.get(), 0, Dtype::f32, ReduceOp::sum, one),
                HasSubstr("count must be at least 1, got 0"));
    EXPECT_THAT(call(world, nullptr, recv.get(), 4, Dtype::f32, ReduceOp::sum, one),
                HasSubstr("send is null"));
    EXPECT_THAT(call(world, local.data(), local.data(), 4, Dtype::f32, ReduceOp::sum, one),
                HasSubstr("recv must point into the symmetric heap"));
    EXPECT_THAT(call(world, local.data(), recv.get(), 65, Dtype::i64, ReduceOp::sum, one),
                HasSubstr("recv too small: needs count * 8 = 520 bytes"));
    EXPECT_THAT(call(world, local.data(), recv.get(), 4, Dtype::bf16, ReduceOp::prod, one),
                HasSubstr("op prod is for integer dtypes (i32, i64), got bf16"));
    EXPECT_THAT(
        call(world, local.data(), recv.get(), 4, Dtype::i32, ReduceOp::max, AllReduceAlgo::atomic),
        HasSubstr("the atomic algorithm only sums, got op max"));
    EXPECT_THAT(
        call(world, local.data(), recv.get(), 4, Dtype::f16, ReduceOp::sum, AllReduceAlgo::atomic),
        HasSubstr("the atomic algorithm adds i32, i64 and f32"));
    if (rt.pe() == 1) {
      EXPECT_THAT(call(first, local.data(), recv.get(), 4, Dtype::f32, ReduceOp::sum, one),
                  HasSubstr("this PE is not a member of team (start 0, stride 1, size 1)"));
    }
    Team by_hand = world;
    by_hand.workspace = nullptr;
    EXPECT_THAT(call(by_hand, local.data(), recv.get(), 4, Dtype::f32, ReduceOp::sum, one),
                HasSubstr("has no workspace"));
    EXPECT_THAT(invalid_argument_message([&] { team_split_strided(rt, world, 1, 1, 2); }),
                HasSubstr("must be >= 0, >= 1, >= 1 and lie inside the parent team"));
    // PE 1 asks for another count: every PE learns which call each PE made.
    const std::size_t count = rt.pe() == 0 ? 7 : 8;
    const std::string mismatch =
        call(world, local.data(), recv.get(), count, Dtype::f32, ReduceOp::sum, one);
    EXPECT_THAT(mismatch, HasSubstr("PEs made different collective calls"));
    EXPECT_THAT(mismatch, HasSubstr("ops::all_reduce(7 x f32, sum"));
    EXPECT_THAT(mismatch, HasSubstr("ops::all_reduce(8 x f32, sum"));
    // The checks left nothing behind: a good call still works.
    reduce_and_check(rt, world, recv.get(), 64, Dtype::f32, ReduceOp::sum, one, false, 51, 1);
  });
}

TEST(AllReduceArguments, EnvironmentPicksTheAlgorithmAndRejectsUnknownNames) {
  EXPECT_EQ(ops::resolve_all_reduce_algo(1, Dtype::f32, 4), AllReduceAlgo::one_shot);
  EXPECT_EQ(ops::resolve_all_reduce_algo(ops::kAllReduceTwoShotThreshold / 4, Dtype::i32, 4),
            AllReduceAlgo::two_shot);
  EXPECT_EQ(ops::resolve_all_reduce_algo(ops::kAllReduceRingThreshold / 2, Dtype::f16, 2),
            AllReduceAlgo::ring);
  // A team of two switches to two-shot earlier.
  EXPECT_EQ(
      ops::resolve_all_reduce_algo(ops::kAllReduceTwoShotThresholdOfTwo / 4 - 1, Dtype::f32, 2),
      AllReduceAlgo::one_shot);
  EXPECT_EQ(ops::resolve_all_reduce_algo(ops::kAllReduceTwoShotThresholdOfTwo / 4, Dtype::f32, 2),
            AllReduceAlgo::two_shot);
  EXPECT_EQ(ops::resolve_all_reduce_algo(ops::kAllReduceTwoShotThresholdOfTwo / 4, Dtype::f32, 3),
            AllReduceAlgo::one_shot);
  EXPECT_EQ(ops::resolve_all_reduce_algo(1 << 20, Dtype::f32, 1), AllReduceAlgo::one_shot);
  ::setenv("TESSERA_ALLREDUCE_ALGO", "ring", 1);
  EXPECT_EQ(ops::resolve_all_reduce_algo(1, Dtype::f32, 4), AllReduceAlgo::ring);
  EXPECT_EQ(ops::resolve_all_reduce_algo(1, Dtype::f32, 4, AllReduceAlgo::two_shot),
            AllReduceAlgo::two_shot);
  ::setenv("TESSERA_ALLREDUCE_ALGO", "tree", 1);
  EXPECT_THAT(invalid_argument_message([] { ops::resolve_all_reduce_algo(1, Dtype::f32, 4); }),
              ::testing::HasSubstr("TESSERA_ALLREDUCE_ALGO must be one_shot, two_shot, ring, "
                                   "atomic or auto, got 'tree'"));
  ::unsetenv("TESSERA_ALLREDUCE_ALGO");
}

// The device block inside a user kernel: block 0 of a two-block grid reduces with two_shot on
// the team's workspace while block 1 waits for it and checks the result.
TEST(AllReduceDevice, BlockInAUserKernelReducesWhileAnotherBlockConsumes) {
  run_pes(3, [](Runtime& rt) {
    const Team world = team_world(rt);
    constexpr std::size_t kCount = 1001;
    auto recv = rt.alloc<std::int64_t>(kCount);
    const auto ws = td::ops::AllReduceWorkspace::from(world.workspace, world.n_pes());
    std::uint64_t epochs = 0;
    for (std::uint64_t call = 1; call <= 3; ++call) {
      std::vector<std::int64_t> send(kCount);
      fill(Dtype::i64, send.data(), kCount, 61, rt.pe(), call, ReduceOp::sum);
      alignas(64) std::uint64_t done[8] = {};
      std::int64_t total = 0;
      launch(
          rt.stream(), 2,
          [&, epochs](td::Block blk, td::Context ctx) {
            if (blk.block_id() == 0) {
              td::ops::all_reduce_two_shot(blk, ctx, world, ws, recv.get(),
                                           static_cast<const std::int64_t*>(send.data()), kCount,
                                           ReduceOp::sum, epochs);
              td::platform::atomic_store(&done[0], std::uint64_t{1}, td::Sem::release,
                                         td::Scope::device);
            } else {
              // Block 0 finishes within the op's own bounded waits; this bound only keeps a
              // broken op from hanging the test.
              const std::uint64_t deadline = td::platform::clock_ns() + 60'000'000'000ull;
              while (td::platform::atomic_load(&done[0], td::Sem::acquire, td::Scope::device) ==
                     0) {
                ASSERT_LT(td::platform::clock_ns(), deadline) << "block 0 never finished";
                td::platform::spin_pause(64);
              }
              for (std::size_t i = 0; i < kCount; ++i) total += recv[i];
            }
          },
          rt.device_context());
      rt.stream().synchronize();
      epochs += td::ops::all_reduce_segments<std::int64_t>(kCount);
      ASSERT_EQ(first_mismatch(world, Dtype::i64, ReduceOp::sum, recv.get(), kCount, 61, call), "");
      std::int64_t want = 0;
      for (std::size_t i = 0; i < kCount; ++i) want += recv[i];
      EXPECT_EQ(total, want);
    }
  });
}

}  // namespace
}  // namespace tessera::ops_test
