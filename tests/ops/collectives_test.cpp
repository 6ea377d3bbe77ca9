// tessera::ops::reduce_scatter, all_to_all, all_to_all_v and broadcast against a double-precision
// reference: 1 to 5 PEs, the world and stride-2 teams, counts that are multiples of nothing (1, 7,
// 4093, 1 Mi for a few), every dtype (and op), in place and out of place, every algorithm, 20
// calls in a row of every collective with fresh data, a late PE, and the argument checks: the
// agreement check of a strided team on the stream, and all_to_all_v's overflow.
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
#include "tessera/ops/all_reduce.hpp"
#include "tessera/ops/all_to_all.hpp"
#include "tessera/ops/broadcast.hpp"
#include "tessera/ops/reduce_scatter.hpp"
#include "tessera/team.hpp"

namespace tessera::collectives_test {
namespace {

namespace td = tessera::device;
using harness::run_pes;
using ops::Dtype;
using ops::ReduceOp;
using ops::ReduceScatterAlgo;
using ops_reference::load;
using ops_reference::reduce;
using ops_reference::store;
using ::testing::HasSubstr;

constexpr Dtype kDtypes[] = {Dtype::f32, Dtype::bf16, Dtype::f16, Dtype::i32, Dtype::i64};
constexpr ReduceOp kOps[] = {ReduceOp::sum, ReduceOp::max, ReduceOp::min, ReduceOp::prod};

bool is_integer(Dtype dtype) { return dtype == Dtype::i32 || dtype == Dtype::i64; }

// Element i of world PE `pe`'s data for call `call` (tests/ops/reduce_reference.hpp).
double value(std::uint64_t seed, int pe, std::uint64_t call, std::size_t i, ReduceOp op) {
  return ops_reference::value(seed, pe, call, i, op, 100);
}

// "" when got[i] == want(i) for every i < count, else where it first differs.
template <class Want>
std::string first_mismatch(const char* what, Dtype dtype, const void* got, std::size_t count,
                           Want&& want) {
  for (std::size_t i = 0; i < count; ++i) {
    const double w = want(i), seen = load(dtype, got, i);
    if (seen != w) {
      return std::string(what) + " " + ops::to_string(dtype) + " count " + std::to_string(count) +
             ": element " + std::to_string(i) + " is " + std::to_string(seen) + ", expected " +
             std::to_string(w);
    }
  }
  return "";
}

// The world team and this PE's stride-2 team (even or odd PEs).
struct Teams {
  Team world, strided;
};
Teams make_teams(Runtime& rt) {
  Teams t;
  t.world = team_world(rt);
  const int n = rt.n_pes();
  const Team evens = team_split_strided(rt, t.world, 0, 2, (n + 1) / 2);
  const Team odds = n > 1 ? team_split_strided(rt, t.world, 1, 2, n / 2) : Team{};
  t.strided = evens.is_member() ? evens : odds;
  return t;
}

// Spends about `us` microseconds computing (a PE that is late for reasons of its own).
void busy_work(int us) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(us);
  volatile std::uint64_t sink = 0;
  while (std::chrono::steady_clock::now() < until) sink = sink + 1;
}

// ---- reduce_scatter -----------------------------------------------------------------------

// One reduce-scatter of fresh data on `team`, checked on return. `heap` holds team.size * count
// elements: the in-place send (recv = its block my_rank) or, out of place, the recv.
void reduce_scatter_and_check(Runtime& rt, const Team& team, void* heap, std::size_t count,
                              Dtype dtype, ReduceOp op, ReduceScatterAlgo algo, bool in_place,
                              std::uint64_t seed, std::uint64_t call) {
  const std::size_t es = ops::size_of(dtype), m = static_cast<std::size_t>(team.size);
  std::vector<unsigned char> local(m * count * es);
  void* send = in_place ? heap : static_cast<void*>(local.data());
  for (std::size_t i = 0; i < m * count; ++i)
    store(dtype, send, i, value(seed, rt.pe(), call, i, op));
  void* recv = in_place ? static_cast<unsigned char*>(heap) +
                              static_cast<std::size_t>(team.my_rank) * count * es
                        : heap;
  ops::reduce_scatter(rt, rt.stream(), team, send, recv, count, dtype, op, algo);
  rt.stream().synchronize();
  const std::size_t block = static_cast<std::size_t>(team.my_rank) * count;
  ASSERT_EQ(first_mismatch("reduce_scatter", dtype, recv, count,
                           [&](std::size_t i) {
                             double w = value(seed, team.pe(0), call, block + i, op);
                             for (int j = 1; j < team.size; ++j)
                               w = reduce(op, w, value(seed, team.pe(j), call, block + i, op));
                             return w;
                           }),
            "")
      << "on PE " << rt.pe() << ", " << ops::to_string(op) << ", " << ops::to_string(algo)
      << (in_place ? ", in place" : "") << ", team size " << team.size;
}

struct Case {
  int pes;
  ReduceScatterAlgo algo;
};

std::string name_of(const ::testing::TestParamInfo<Case>& info) {
  return "P" + std::to_string(info.param.pes) + "_" + ops::to_string(info.param.algo);
}

class ReduceScatter : public ::testing::TestWithParam<Case> {};

TEST_P(ReduceScatter, EveryMemberGetsItsBlockReducedForEveryDtypeOpAndCount) {
  const Case c = GetParam();
  run_pes(c.pes, [&](Runtime& rt) {
    const Teams teams = make_teams(rt);
    auto heap = rt.alloc<std::int64_t>(5 * 4093);
    std::uint64_t call = 0;
    for (const Team* team : {&teams.world, &teams.strided}) {
      ASSERT_TRUE(team->is_member());
      for (std::size_t count : {std::size_t{1}, std::size_t{7}, std::size_t{4093}}) {
        for (Dtype dtype : kDtypes) {
          for (ReduceOp op : kOps) {
            if (op == ReduceOp::prod && !is_integer(dtype)) continue;
            ++call;
            reduce_scatter_and_check(rt, *team, heap.get(), count, dtype, op, c.algo, call % 2 == 0,
                                     11, call);
            if (::testing::Test::HasFatalFailure()) return;
          }
        }
      }
    }
  });
}

std::vector<Case> reduce_scatter_cases() {
  std::vector<Case> cases;
  for (int pes = 1; pes <= 5; ++pes) {
    for (ReduceScatterAlgo algo :
         {ReduceScatterAlgo::automatic, ReduceScatterAlgo::one_shot, ReduceScatterAlgo::ring}) {
      cases.push_back({pes, algo});
    }
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Ops, ReduceScatter, ::testing::ValuesIn(reduce_scatter_cases()), name_of);

// ---- all_to_all ---------------------------------------------------------------------------

void all_to_all_and_check(Runtime& rt, const Team& team, void* heap, std::size_t count, Dtype dtype,
                          bool in_place, std::uint64_t seed, std::uint64_t call) {
  const std::size_t es = ops::size_of(dtype), m = static_cast<std::size_t>(team.size);
  std::vector<unsigned char> local(m * count * es);
  void* send = in_place ? heap : static_cast<void*>(local.data());
  for (std::size_t i = 0; i < m * count; ++i)
    store(dtype, send, i, value(seed, rt.pe(), call, i, ReduceOp::max));
  ops::all_to_all(rt, rt.stream(), team, send, heap, count, dtype);
  rt.stream().synchronize();
  const std::size_t mine = static_cast<std::size_t>(team.my_rank) * count;
  ASSERT_EQ(first_mismatch("all_to_all", dtype, heap, m * count,
                           [&](std::size_t i) {
                             // Block s of recv is block my_rank of member s's send.
                             return value(seed, team.pe(static_cast<int>(i / count)), call,
                                          mine + i % count, ReduceOp::max);
                           }),
            "")
      << "on PE " << rt.pe() << (in_place ? ", in place" : "") << ", team size " << team.size;
}

std::string pes_name(const ::testing::TestParamInfo<int>& p) {
  return "P" + std::to_string(p.param);
}

class AllToAll : public ::testing::TestWithParam<int> {};

TEST_P(AllToAll, EveryMemberGetsBlockMyRankOfEveryMember) {
  run_pes(GetParam(), [&](Runtime& rt) {
    const Teams teams = make_teams(rt);
    auto heap = rt.alloc<std::int64_t>(5 * 4093);
    std::uint64_t call = 0;
    for (const Team* team : {&teams.world, &teams.strided}) {
      for (std::size_t count : {std::size_t{1}, std::size_t{7}, std::size_t{4093}}) {
        for (Dtype dtype : kDtypes) {
          ++call;
          // In place on some members only, in some calls: each member decides for itself.
          const bool in_place = (call + static_cast<std::uint64_t>(rt.pe())) % 3 == 0;
          all_to_all_and_check(rt, *team, heap.get(), count, dtype, in_place, 21, call);
          if (::testing::Test::HasFatalFailure()) return;
        }
      }
    }
  });
}

INSTANTIATE_TEST_SUITE_P(Ops, AllToAll, ::testing::Values(1, 2, 3, 4, 5), pes_name);

// ---- all_to_all_v -------------------------------------------------------------------------

// Elements world PE `from` sends world PE `to` in call `call` (0 for some pairs).
std::size_t v_count(std::uint64_t seed, int from, int to, std::uint64_t call, std::size_t scale) {
  const std::uint64_t h = (seed * 31 + static_cast<std::uint64_t>(from) * 7 +
                           static_cast<std::uint64_t>(to) * 13 + call * 5) %
                          11;
  return h == 3 ? 0 : static_cast<std::size_t>(h) * scale + static_cast<std::size_t>(from);
}

void all_to_all_v_and_check(Runtime& rt, const Team& team, void* heap, std::size_t capacity,
                            Dtype dtype, std::size_t scale, std::uint64_t seed,
                            std::uint64_t call) {
  const auto m = static_cast<std::size_t>(team.size);
  std::vector<std::size_t> send_counts(m), recv_counts(m, 99), recv_offsets(m, 99);
  std::size_t total = 0;
  for (std::size_t j = 0; j < m; ++j) {
    send_counts[j] = v_count(seed, rt.pe(), team.pe(static_cast<int>(j)), call, scale);
    total += send_counts[j];
  }
  std::vector<unsigned char> send(total * ops::size_of(dtype) + 1);
  for (std::size_t i = 0; i < total; ++i)
    store(dtype, send.data(), i, value(seed, rt.pe(), call, i, ReduceOp::max));
  ops::all_to_all_v(rt, rt.stream(), team, send.data(), send_counts.data(), heap, capacity,
                    recv_counts.data(), recv_offsets.data(), dtype);
  rt.stream().synchronize();
  std::size_t at = 0;
  for (std::size_t s = 0; s < m; ++s) {
    const int from = team.pe(static_cast<int>(s));
    const std::size_t n = v_count(seed, from, rt.pe(), call, scale);
    ASSERT_EQ(recv_counts[s], n) << "PE " << rt.pe() << " from rank " << s;
    ASSERT_EQ(recv_offsets[s], at) << "PE " << rt.pe() << " from rank " << s;
    // Where member s's block for this PE starts in its send: after its blocks for ranks < mine.
    std::size_t first = 0;
    for (int j = 0; j < team.my_rank; ++j) first += v_count(seed, from, team.pe(j), call, scale);
    ASSERT_EQ(
        first_mismatch(
            "all_to_all_v", dtype, static_cast<unsigned char*>(heap) + at * ops::size_of(dtype), n,
            [&](std::size_t i) { return value(seed, from, call, first + i, ReduceOp::max); }),
        "")
        << "on PE " << rt.pe() << ", block from rank " << s;
    at += n;
  }
}

class AllToAllV : public ::testing::TestWithParam<int> {};

TEST_P(AllToAllV, BlocksLandPackedInSourceOrderWithTheirCountsAndOffsets) {
  run_pes(GetParam(), [&](Runtime& rt) {
    const Teams teams = make_teams(rt);
    constexpr std::size_t kCapacity = 5 * (10 * 400 + 5);
    auto heap = rt.alloc<std::int64_t>(kCapacity);
    std::uint64_t call = 0;
    for (const Team* team : {&teams.world, &teams.strided}) {
      for (std::size_t scale : {std::size_t{1}, std::size_t{400}}) {
        for (Dtype dtype : kDtypes) {
          ++call;
          all_to_all_v_and_check(rt, *team, heap.get(), kCapacity, dtype, scale, 31, call);
          if (::testing::Test::HasFatalFailure()) return;
        }
      }
    }
  });
}

INSTANTIATE_TEST_SUITE_P(Ops, AllToAllV, ::testing::Values(1, 2, 3, 4, 5), pes_name);

// ---- broadcast ----------------------------------------------------------------------------

void broadcast_and_check(Runtime& rt, const Team& team, void* heap, std::size_t count, Dtype dtype,
                         int root, bool in_place, std::uint64_t seed, std::uint64_t call) {
  const std::size_t es = ops::size_of(dtype);
  std::vector<unsigned char> local(count * es);
  const bool is_root = team.my_rank == root;
  void* send = in_place ? heap : static_cast<void*>(local.data());
  // Every member scribbles on recv first: the root's data must replace it.
  for (std::size_t i = 0; i < count; ++i) store(dtype, heap, i, -7);
  if (is_root) {
    for (std::size_t i = 0; i < count; ++i)
      store(dtype, send, i, value(seed, rt.pe(), call, i, ReduceOp::max));
  }
  ops::broadcast(rt, rt.stream(), team, is_root ? send : nullptr, heap, count, dtype, root);
  rt.stream().synchronize();
  ASSERT_EQ(first_mismatch(
                "broadcast", dtype, heap, count,
                [&](std::size_t i) { return value(seed, team.pe(root), call, i, ReduceOp::max); }),
            "")
      << "on PE " << rt.pe() << ", root " << root << (in_place ? ", in place" : "")
      << ", team size " << team.size;
}

class Broadcast : public ::testing::TestWithParam<int> {};

// Counts 1, 7, 4093 and 100003 (several chunks), from every root in turn.
TEST_P(Broadcast, EveryMemberGetsTheRootsDataFromEveryRoot) {
  run_pes(GetParam(), [&](Runtime& rt) {
    const Teams teams = make_teams(rt);
    auto heap = rt.alloc<std::int64_t>(100003);
    std::uint64_t call = 0;
    for (const Team* team : {&teams.world, &teams.strided}) {
      for (std::size_t count :
           {std::size_t{1}, std::size_t{7}, std::size_t{4093}, std::size_t{100003}}) {
        for (Dtype dtype : kDtypes) {
          ++call;
          const int root = static_cast<int>(call % static_cast<std::uint64_t>(team->size));
          broadcast_and_check(rt, *team, heap.get(), count, dtype, root, call % 2 == 0, 41, call);
          if (::testing::Test::HasFatalFailure()) return;
        }
      }
    }
  });
}

INSTANTIATE_TEST_SUITE_P(Ops, Broadcast, ::testing::Values(1, 2, 3, 4, 5), pes_name);

// ---- calls in a row, large calls ----------------------------------------------------------

// 20 calls (3 when sanitized) of each collective, interleaved with all_reduce, on one strided or
// world team with fresh data, no reset and no barrier between them; faster PEs run ahead into the
// next call while slower ones still check the last result. The last PE is late every third call:
// before its call (the others must wait for it) or before checking its result (the others' next
// call must not overwrite its recv or the staging it still reads).
TEST(CollectivesRepeated, TwentyCallsOfEachInARowNeedNoResetWithALatePe) {
  for (int pes : {3, 4}) {
    run_pes(pes, [](Runtime& rt) {
      const Teams teams = make_teams(rt);
      const Team& team = rt.n_pes() == 4 ? teams.strided : teams.world;
      constexpr std::size_t kCount = 1001;
      auto heap = rt.alloc<std::int64_t>(5 * kCount);
      auto reduced = rt.alloc<float>(kCount);
      const std::uint64_t calls = harness::repetitions<std::uint64_t>(20, 3);
      const bool late = rt.pe() == rt.n_pes() - 1;
      for (std::uint64_t call = 1; call <= calls; ++call) {
        if (late && call % 3 == 1) busy_work(2000);
        const auto algo = call % 2 == 0 ? ReduceScatterAlgo::ring : ReduceScatterAlgo::one_shot;
        reduce_scatter_and_check(rt, team, heap.get(), kCount, Dtype::f32, ReduceOp::sum, algo,
                                 call % 3 == 0, 51, call);
        if (late && call % 3 == 2) busy_work(2000);
        all_to_all_and_check(rt, team, heap.get(), kCount, Dtype::i32, call % 4 == 0, 52, call);
        if (late && call % 3 == 0) busy_work(2000);
        broadcast_and_check(rt, team, heap.get(), kCount, Dtype::bf16,
                            static_cast<int>(call % static_cast<std::uint64_t>(team.size)),
                            call % 2 == 1, 53, call);
        all_to_all_v_and_check(rt, team, heap.get(), 5 * kCount, Dtype::i64, 20, 54, call);
        if (::testing::Test::HasFatalFailure()) return;
        // all_reduce shares the team's epochs and staging with the others.
        std::vector<float> ones(kCount, 1.0f);
        ops::all_reduce(rt, rt.stream(), team, ones.data(), reduced.get(), kCount, Dtype::f32,
                        ReduceOp::sum, ops::AllReduceAlgo::one_shot);
        rt.stream().synchronize();
        ASSERT_EQ(reduced[kCount - 1], static_cast<float>(team.size));
      }
    });
  }
}

// 1 Mi elements: several segments (or chunks) per call, for a few combinations.
TEST(CollectivesLarge, MebiElementCallsSpanSeveralSegments) {
  constexpr std::size_t kMi = std::size_t{1} << 20;
  harness::PeOptions big;
  big.heap_size = std::size_t{160} << 20;
  run_pes(
      3,
      [&](Runtime& rt) {
        const Team world = team_world(rt);
        auto heap = rt.alloc<std::int64_t>(3 * kMi);
        reduce_scatter_and_check(rt, world, heap.get(), kMi, Dtype::f32, ReduceOp::sum,
                                 ReduceScatterAlgo::ring, false, 61, 1);
        if (::testing::Test::HasFatalFailure()) return;
        reduce_scatter_and_check(rt, world, heap.get(), kMi, Dtype::bf16, ReduceOp::max,
                                 ReduceScatterAlgo::one_shot, true, 61, 2);
        if (::testing::Test::HasFatalFailure()) return;
        all_to_all_and_check(rt, world, heap.get(), kMi, Dtype::i32, false, 62, 3);
        if (::testing::Test::HasFatalFailure()) return;
        all_to_all_and_check(rt, world, heap.get(), kMi, Dtype::f16, rt.pe() != 1, 62, 4);
        if (::testing::Test::HasFatalFailure()) return;
        broadcast_and_check(rt, world, heap.get(), kMi, Dtype::i64, 2, false, 63, 5);
        if (::testing::Test::HasFatalFailure()) return;
        all_to_all_v_and_check(rt, world, heap.get(), 3 * kMi, Dtype::f32, 60000, 64, 6);
      },
      big);
}

// ---- errors -------------------------------------------------------------------------------

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

TEST(CollectivesArguments, BadArgumentsAreRejectedWithClearErrors) {
  run_pes(2, [](Runtime& rt) {
    const Team world = team_world(rt);
    const Team first = team_split_strided(rt, world, 0, 1, 1);
    auto heap = rt.alloc<float>(64);
    std::vector<float> local(64);
    std::vector<std::size_t> counts(2, 1), got(2), offsets(2);
    Stream& s = rt.stream();
    float* h = heap.get();
    float* l = local.data();
    auto rs = [&](const Team& t, const void* send, void* recv, std::size_t count, Dtype dtype,
                  ReduceOp op) {
      return invalid_argument_message([&] {
        ops::reduce_scatter(rt, s, t, send, recv, count, dtype, op, ReduceScatterAlgo::one_shot);
      });
    };
    EXPECT_THAT(rs(world, l, h, 0, Dtype::f32, ReduceOp::sum),
                HasSubstr("reduce_scatter: count must be at least 1, got 0"));
    EXPECT_THAT(rs(world, nullptr, h, 4, Dtype::f32, ReduceOp::sum),
                HasSubstr("reduce_scatter: send is null"));
    EXPECT_THAT(rs(world, l, l + 32, 4, Dtype::f32, ReduceOp::sum),
                HasSubstr("reduce_scatter: recv must point into the symmetric heap"));
    EXPECT_THAT(rs(world, l, h, 33, Dtype::i64, ReduceOp::sum),
                HasSubstr("recv too small: needs count * 8 = 264 bytes"));
    EXPECT_THAT(rs(world, l, h, 4, Dtype::f16, ReduceOp::prod),
                HasSubstr("op prod is for integer dtypes (i32, i64), got f16"));
    EXPECT_THAT(rs(world, h, h + 1, 4, Dtype::f32, ReduceOp::sum),
                HasSubstr("reduce_scatter: recv overlaps send"));
    if (rt.pe() == 1) {
      EXPECT_THAT(rs(first, l, h, 4, Dtype::f32, ReduceOp::sum),
                  HasSubstr("this PE is not a member of team (start 0, stride 1, size 1)"));
    }
    Team by_hand = world;
    by_hand.workspace = nullptr;
    EXPECT_THAT(rs(by_hand, l, h, 4, Dtype::f32, ReduceOp::sum), HasSubstr("has no workspace"));

    auto a2a = [&](const void* send, void* recv, std::size_t count) {
      return invalid_argument_message(
          [&] { ops::all_to_all(rt, s, world, send, recv, count, Dtype::f32); });
    };
    EXPECT_THAT(a2a(l, h, 0), HasSubstr("all_to_all: count must be at least 1, got 0"));
    EXPECT_THAT(a2a(nullptr, h, 4), HasSubstr("all_to_all: send is null"));
    EXPECT_THAT(a2a(l, l, 4), HasSubstr("all_to_all: recv must point into the symmetric heap"));
    EXPECT_THAT(a2a(l, h, 33), HasSubstr("recv too small: needs team.size * count * 4 = 264"));
    EXPECT_THAT(a2a(h + 2, h, 4), HasSubstr("recv partly overlaps send"));

    auto a2av = [&](const void* send, const std::size_t* sc, void* recv, std::size_t capacity,
                    std::size_t* rc, std::size_t* ro) {
      return invalid_argument_message(
          [&] { ops::all_to_all_v(rt, s, world, send, sc, recv, capacity, rc, ro, Dtype::f32); });
    };
    EXPECT_THAT(a2av(l, nullptr, h, 8, got.data(), offsets.data()),
                HasSubstr("all_to_all_v: send_counts is null"));
    EXPECT_THAT(a2av(l, counts.data(), h, 8, nullptr, offsets.data()),
                HasSubstr("all_to_all_v: recv_counts is null"));
    EXPECT_THAT(a2av(l, counts.data(), h, 8, got.data(), nullptr),
                HasSubstr("all_to_all_v: recv_offsets is null"));
    EXPECT_THAT(a2av(l, counts.data(), l + 8, 8, got.data(), offsets.data()),
                HasSubstr("all_to_all_v: recv must point into the symmetric heap"));
    EXPECT_THAT(a2av(l, counts.data(), h, 65, got.data(), offsets.data()),
                HasSubstr("recv too small: needs recv_capacity * 4 = 260"));
    EXPECT_THAT(a2av(h, counts.data(), h, 8, got.data(), offsets.data()),
                HasSubstr("all_to_all_v: recv overlaps send"));

    auto bc = [&](const void* send, void* recv, std::size_t count, int root) {
      return invalid_argument_message(
          [&] { ops::broadcast(rt, s, world, send, recv, count, Dtype::f32, root); });
    };
    EXPECT_THAT(bc(l, h, 0, 0), HasSubstr("broadcast: count must be at least 1, got 0"));
    EXPECT_THAT(bc(l, h, 4, 2),
                HasSubstr("root 2 is not a rank of team (start 0, stride 1, size 2): expected 0 "
                          ".. 1"));
    EXPECT_THAT(bc(l, l, 4, 0), HasSubstr("broadcast: recv must point into the symmetric heap"));
    if (rt.pe() == 0) {
      EXPECT_THAT(bc(nullptr, h, 4, 0), HasSubstr("broadcast: send is null on the root"));
      EXPECT_THAT(bc(h + 1, h, 4, 0), HasSubstr("recv partly overlaps send on the root"));
    }

    // PE 1 asks for another count on the world team: checked on the host, naming both calls.
    const std::size_t count = rt.pe() == 0 ? 7 : 8;
    const std::string mismatch = rs(world, l, h, count, Dtype::f32, ReduceOp::sum);
    EXPECT_THAT(mismatch, HasSubstr("PEs made different collective calls"));
    EXPECT_THAT(mismatch, HasSubstr("ops::reduce_scatter(7 x f32, sum, one_shot"));
    EXPECT_THAT(mismatch, HasSubstr("ops::reduce_scatter(8 x f32, sum, one_shot"));
    // The checks left nothing behind: good calls still work.
    reduce_scatter_and_check(rt, world, h, 16, Dtype::f32, ReduceOp::sum,
                             ReduceScatterAlgo::one_shot, false, 71, 1);
    broadcast_and_check(rt, world, h, 16, Dtype::f32, 1, false, 71, 2);
  });
}

// Runs `call` then synchronizes; returns the message of the Error(invalid_argument) synchronize
// throws.
template <class Fn>
std::string stream_error(Runtime& rt, Fn&& call) {
  return invalid_argument_message([&] {
    call();
    rt.stream().synchronize();
  });
}

// The members of a strided team that make different calls learn it at synchronize, each message
// naming the team and both calls; the team is checked on the stream because the PEs outside it
// make no matching call.
TEST(CollectivesArguments, StridedTeamMembersThatDisagreeFailAtSynchronizeNamingBothCalls) {
  run_pes(4, [](Runtime& rt) {
    const Teams teams = make_teams(rt);
    const Team& team = teams.strided;  // {0, 2} or {1, 3}
    auto heap = rt.alloc<float>(64);
    std::vector<float> local(64, 1.0f);
    const bool second = team.my_rank == 1;
    // Evens disagree on the count of a reduce_scatter, odds on the op of an all_reduce.
    std::string message;
    if (team.start == 0) {
      message = stream_error(rt, [&] {
        ops::reduce_scatter(rt, rt.stream(), team, local.data(), heap.get(), second ? 8 : 7,
                            Dtype::f32, ReduceOp::sum, ReduceScatterAlgo::ring);
      });
      EXPECT_THAT(message, HasSubstr("reduce_scatter: PEs made different collective calls on "
                                     "team (start 0, stride 2, size 2): PE 0 called "
                                     "ops::reduce_scatter(7 x f32, sum, ring)"));
      EXPECT_THAT(message, HasSubstr("PE 2 called ops::reduce_scatter(8 x f32, sum, ring)"));
    } else {
      message = stream_error(rt, [&] {
        ops::all_reduce(rt, rt.stream(), team, local.data(), heap.get(), 5, Dtype::i32,
                        second ? ReduceOp::max : ReduceOp::min, ops::AllReduceAlgo::one_shot);
      });
      EXPECT_THAT(message, HasSubstr("PE 1 called ops::all_reduce(5 x i32, min, one_shot"));
      EXPECT_THAT(message, HasSubstr("PE 3 called ops::all_reduce(5 x i32, max, one_shot"));
    }
    // Another op kind or root differs too.
    message = stream_error(rt, [&] {
      if (second) {
        ops::broadcast(rt, rt.stream(), team, local.data(), heap.get(), 9, Dtype::f32, 1);
      } else {
        ops::all_to_all(rt, rt.stream(), team, local.data(), heap.get(), 9, Dtype::f32);
      }
    });
    EXPECT_THAT(message, HasSubstr("called ops::all_to_all(9 x f32, recv @"));
    EXPECT_THAT(message, HasSubstr("called ops::broadcast(9 x f32, root 1, recv @"));
    // Both mismatches used as many epochs on every member: the team still works.
    reduce_scatter_and_check(rt, team, heap.get(), 16, Dtype::f32, ReduceOp::sum,
                             ReduceScatterAlgo::one_shot, false, 81, 1);
  });
}

// all_to_all_v's blocks for a member beyond its recv_capacity: every member fails at
// synchronize naming that member, its capacity and what each sender sent; nothing is dropped
// silently, and the next call works.
TEST(CollectivesArguments, AllToAllVOverflowFailsOnEveryMemberNamingSendersAndCounts) {
  run_pes(3, [](Runtime& rt) {
    const Team world = team_world(rt);
    auto heap = rt.alloc<float>(64);
    std::vector<float> send(64, 1.0f);
    // Every PE sends 5 elements to PE 1, whose capacity is 12 (the others' 64).
    std::vector<std::size_t> counts = {1, 5, 2}, got(3), offsets(3);
    const std::size_t capacity = rt.pe() == 1 ? 12 : 64;
    const std::string message = stream_error(rt, [&] {
      ops::all_to_all_v(rt, rt.stream(), world, send.data(), counts.data(), heap.get(), capacity,
                        got.data(), offsets.data(), Dtype::f32);
    });
    EXPECT_THAT(message, HasSubstr("all_to_all_v: PE 1 would receive 15 elements, more than its "
                                   "recv_capacity of 12 (from PE 0: 5, PE 1: 5, PE 2: 5)"));
    all_to_all_v_and_check(rt, world, heap.get(), 64, Dtype::f32, 1, 91, 1);
  });
}

TEST(CollectivesArguments, EnvironmentPicksTheReduceScatterAlgorithmAndRejectsUnknownNames) {
  EXPECT_EQ(ops::resolve_reduce_scatter_algo(1, Dtype::f32, 4), ReduceScatterAlgo::one_shot);
  EXPECT_EQ(ops::resolve_reduce_scatter_algo(ops::kReduceScatterRingThreshold, Dtype::i32, 4),
            ReduceScatterAlgo::ring);
  ::setenv("TESSERA_REDUCESCATTER_ALGO", "ring", 1);
  EXPECT_EQ(ops::resolve_reduce_scatter_algo(1, Dtype::f32, 4), ReduceScatterAlgo::ring);
  EXPECT_EQ(ops::resolve_reduce_scatter_algo(1, Dtype::f32, 4, ReduceScatterAlgo::one_shot),
            ReduceScatterAlgo::one_shot);
  ::setenv("TESSERA_REDUCESCATTER_ALGO", "tree", 1);
  EXPECT_THAT(invalid_argument_message([] { ops::resolve_reduce_scatter_algo(1, Dtype::f32, 4); }),
              HasSubstr("TESSERA_REDUCESCATTER_ALGO must be one_shot, ring or auto, got 'tree'"));
  ::unsetenv("TESSERA_REDUCESCATTER_ALGO");
}

// The device blocks inside a user kernel: one block reduce-scatters, then broadcasts, on the
// team's workspace, with the epochs counted by the caller.
TEST(CollectivesDevice, BlocksInAUserKernelShareTheTeamsEpochs) {
  run_pes(3, [](Runtime& rt) {
    const Team world = team_world(rt);
    constexpr std::size_t kCount = 777;
    auto out = rt.alloc<std::int32_t>(kCount);
    const auto ws = td::ops::AllReduceWorkspace::from(world.workspace, world.n_pes());
    std::vector<std::int32_t> send(3 * kCount);
    for (std::size_t i = 0; i < send.size(); ++i) send[i] = static_cast<std::int32_t>(i) + rt.pe();
    std::uint64_t epochs = 0;
    launch(
        rt.stream(), 1,
        [&](td::Block blk, td::Context ctx) {
          td::ops::reduce_scatter_ring(blk, ctx, world, ws, out.get(),
                                       static_cast<const std::int32_t*>(send.data()), kCount,
                                       ReduceOp::sum, epochs);
          const std::uint64_t next =
              epochs + td::ops::reduce_scatter_segments<std::int32_t>(kCount, world.n_pes());
          td::ops::broadcast(blk, ctx, world, ws, out.get(),
                             static_cast<const std::int32_t*>(out.get()), kCount, 0, next);
        },
        rt.device_context());
    rt.stream().synchronize();
    // Rank 0's block, broadcast: element i is 3 * i + (0 + 1 + 2).
    for (std::size_t i = 0; i < kCount; ++i) {
      ASSERT_EQ(out[i], static_cast<std::int32_t>(3 * i + 3)) << "element " << i;
    }
  });
}

}  // namespace
}  // namespace tessera::collectives_test
