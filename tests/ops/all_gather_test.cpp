// tessera::ops::all_gather and the device blocks it runs: every PE count from 1 to 4, both
// algorithms, sizes that are multiples of nothing, 20 calls per buffer without any reset (3 in a
// sanitized build: first call, a late PE's call, a call after it), late
// PEs on both sides of a call, and the argument checks.
#include "tessera/ops/all_gather.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "harness/run_pes.hpp"
#include "harness/sanitized.hpp"
#include "tessera/device/ops/all_gather.hpp"
#include "tessera/launch.hpp"

namespace tessera::ops_test {
namespace {

namespace td = tessera::device;
using harness::run_pes;
using ops::AllGatherAlgo;

// The contribution of PE `pe` to call `call` of test `seed`: bytes any PE can recompute.
std::vector<std::uint8_t> contribution(std::uint64_t seed, int pe, std::uint64_t call,
                                       std::size_t bytes) {
  std::mt19937_64 rng(seed * 1000003u + static_cast<std::uint64_t>(pe) * 7919u + call);
  std::vector<std::uint8_t> data(bytes);
  for (std::size_t i = 0; i < bytes; i += 8) {
    const std::uint64_t word = rng();
    std::memcpy(data.data() + i, &word, std::min<std::size_t>(8, bytes - i));
  }
  return data;
}

// Where recv first differs from what call `call` should have gathered, or "" when it matches.
std::string first_mismatch(const std::uint8_t* recv, std::uint64_t seed, int n_pes,
                           std::uint64_t call, std::size_t bytes) {
  for (int p = 0; p < n_pes; ++p) {
    const auto want = contribution(seed, p, call, bytes);
    const std::uint8_t* got = recv + static_cast<std::size_t>(p) * bytes;
    if (std::memcmp(got, want.data(), bytes) == 0) continue;  // one range check under a sanitizer
    for (std::size_t i = 0; i < bytes; ++i) {
      if (got[i] != want[i]) {
        return "call " + std::to_string(call) + ": slot of PE " + std::to_string(p) + " byte " +
               std::to_string(i) + " is " + std::to_string(got[i]) + ", expected " +
               std::to_string(want[i]);
      }
    }
  }
  return "";
}

// Spends about `us` microseconds computing (a PE that is late for reasons of its own).
void busy_work(int us) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(us);
  volatile std::uint64_t sink = 0;
  while (std::chrono::steady_clock::now() < until) sink = sink + 1;
}

enum class Late { none, before_send, before_check };

struct Case {
  int pes;
  AllGatherAlgo algo;
  std::size_t bytes;
  Late late = Late::none;
};

std::string name_of(const ::testing::TestParamInfo<Case>& info) {
  const Case& c = info.param;
  static const char* kLate[] = {"", "_LateSender", "_LateReader"};
  return "P" + std::to_string(c.pes) + "_" + ops::to_string(c.algo) + "_" +
         std::to_string(c.bytes) + "B" + kLate[static_cast<int>(c.late)];
}

class AllGather : public ::testing::TestWithParam<Case> {};

// 20 calls (3 when sanitized) on one buffer with fresh random data each time and no barrier
// between calls: every PE checks its recv right after its call returns, while faster PEs already
// run the next call.
TEST_P(AllGather, EveryPeReceivesEveryContributionCallAfterCall) {
  const Case c = GetParam();
  const std::uint64_t seed = c.bytes * 31 + static_cast<std::uint64_t>(c.pes);
  run_pes(c.pes, [&](Runtime& rt) {
    const int n = rt.n_pes(), me = rt.pe();
    auto recv = rt.alloc<std::uint8_t>(static_cast<std::size_t>(n) * c.bytes);
    const std::uint64_t calls = harness::repetitions<std::uint64_t>(20, 3);
    for (std::uint64_t call = 1; call <= calls; ++call) {
      const auto mine = contribution(seed, me, call, c.bytes);
      // The last PE is late: it computes before sending, or reads its result slowly while the
      // others already push the next call (which must not overwrite what it still reads).
      const bool late = me == n - 1 && call % 2 == 0;
      if (late && c.late == Late::before_send) busy_work(2000);
      ops::all_gather(rt, rt.stream(), mine.data(), recv.get(), c.bytes, c.algo);
      rt.stream().synchronize();
      if (late && c.late == Late::before_check) busy_work(2000);
      const std::string mismatch = first_mismatch(recv.get(), seed, n, call, c.bytes);
      ASSERT_EQ(mismatch, "") << "on PE " << me;
    }
  });
}

std::vector<Case> all_cases() {
  std::vector<Case> cases;
  for (int pes = 1; pes <= 4; ++pes) {
    for (AllGatherAlgo algo :
         {AllGatherAlgo::oneshot, AllGatherAlgo::ring, AllGatherAlgo::automatic}) {
      for (std::size_t bytes :
           {std::size_t{1}, std::size_t{1000}, std::size_t{65537}, (std::size_t{1} << 20) + 3}) {
        cases.push_back({pes, algo, bytes});
      }
    }
  }
  for (int pes : {2, 3, 4}) {
    for (AllGatherAlgo algo : {AllGatherAlgo::oneshot, AllGatherAlgo::ring}) {
      for (Late late : {Late::before_send, Late::before_check}) {
        cases.push_back({pes, algo, 1000, late});
        cases.push_back({pes, algo, 65537, late});
        cases.push_back({pes, algo, (std::size_t{1} << 20) + 3, late});
      }
    }
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Ops, AllGather, ::testing::ValuesIn(all_cases()), name_of);

// In place (send is this PE's slot of recv), calls on two buffers interleaved with different
// sizes and algorithms, and a switch of algorithm on one buffer: nothing interferes.
TEST(AllGatherBuffers, InPlaceInterleavedBuffersAndAlgorithmSwitchesStayIndependent) {
  run_pes(3, [](Runtime& rt) {
    const int n = rt.n_pes(), me = rt.pe();
    constexpr std::size_t kA = 777, kB = 70001;
    auto a = rt.alloc<std::uint8_t>(static_cast<std::size_t>(n) * kA);
    auto b = rt.alloc<std::uint8_t>(static_cast<std::size_t>(n) * kB);
    const std::uint64_t calls = harness::repetitions<std::uint64_t>(20, 3);
    for (std::uint64_t call = 1; call <= calls; ++call) {
      const auto mine_a = contribution(1, me, call, kA);
      std::copy(mine_a.begin(), mine_a.end(), a.get() + static_cast<std::size_t>(me) * kA);
      const auto mine_b = contribution(2, me, call, kB);
      const AllGatherAlgo algo_a = call % 3 == 0 ? AllGatherAlgo::ring : AllGatherAlgo::oneshot;
      ops::all_gather(rt, rt.stream(), a.get() + static_cast<std::size_t>(me) * kA, a.get(), kA,
                      algo_a);
      ops::all_gather(rt, rt.stream(), mine_b.data(), b.get(), kB, AllGatherAlgo::ring);
      rt.stream().synchronize();
      ASSERT_EQ(first_mismatch(a.get(), 1, n, call, kA), "") << "buffer a on PE " << me;
      ASSERT_EQ(first_mismatch(b.get(), 2, n, call, kB), "") << "buffer b on PE " << me;
    }
  });
}

// The device blocks inside a user kernel: block 0 of a two-block grid gathers (ring with small
// chunks so the pipeline has many steps, staged and direct one-shot in turn, on one set of
// signals) while block 1 waits for its result and sums it.
TEST(AllGatherDevice, BlockInAUserKernelGathersWhileAnotherBlockConsumes) {
  run_pes(4, [](Runtime& rt) {
    const int n = rt.n_pes(), me = rt.pe();
    constexpr std::size_t kBytes = 10007;
    auto recv = rt.alloc<std::uint8_t>(static_cast<std::size_t>(n) * kBytes);
    auto words = rt.alloc<std::uint64_t>(td::ops::AllGatherSignals::kWordsPerPe *
                                         static_cast<std::size_t>(n));
    auto staging = rt.alloc<std::uint8_t>(2 * static_cast<std::size_t>(n) * kBytes);
    for (auto& w : words) w = 0;
    rt.barrier();
    const auto sigs = td::ops::AllGatherSignals::from_words(words.get(), n);
    const std::uint64_t calls = harness::repetitions<std::uint64_t>(20, 3);
    for (std::uint64_t call = 1; call <= calls; ++call) {
      const auto mine = contribution(3, me, call, kBytes);
      alignas(64) std::uint64_t done[8] = {};
      std::uint64_t sum = 0;
      launch(
          rt.stream(), 2,
          [&, call](td::Block blk, td::Context ctx) {
            if (blk.block_id() == 0) {
              if (call % 2 == 0) {
                td::ops::all_gather_ring(blk, ctx, recv.get(), mine.data(), kBytes, 1000, sigs,
                                         call);
              } else {
                td::ops::all_gather_oneshot(blk, ctx, recv.get(), mine.data(), kBytes, sigs, call);
              }
              td::platform::atomic_store(&done[0], std::uint64_t{1}, td::Sem::release,
                                         td::Scope::device);
            } else {
              // Block 0 finishes within the op's own bounded waits; this bound only keeps a broken
              // op from hanging the test.
              const std::uint64_t deadline = td::platform::clock_ns() + 60'000'000'000ull;
              while (td::platform::atomic_load(&done[0], td::Sem::acquire, td::Scope::device) ==
                     0) {
                ASSERT_LT(td::platform::clock_ns(), deadline) << "block 0 never finished";
                td::platform::spin_pause(64);
              }
              for (std::size_t i = 0; i < static_cast<std::size_t>(n) * kBytes; ++i) {
                sum += recv[i];
              }
            }
          },
          rt.device_context());
      rt.stream().synchronize();
      std::uint64_t want = 0;
      for (int p = 0; p < n; ++p) {
        for (std::uint8_t v : contribution(3, p, call, kBytes)) want += v;
      }
      ASSERT_EQ(sum, want) << "call " << call << " on PE " << me;
      ASSERT_EQ(first_mismatch(recv.get(), 3, n, call, kBytes), "") << "on PE " << me;
    }
  });
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

TEST(AllGatherArguments, BadArgumentsAreRejectedWithClearErrors) {
  using ::testing::HasSubstr;
  run_pes(2, [](Runtime& rt) {
    auto recv = rt.alloc<std::uint8_t>(2 * 100);  // the heap rounds the block up to 256 bytes
    std::vector<std::uint8_t> send(200), local(200);
    Stream& s = rt.stream();
    EXPECT_THAT(
        invalid_argument_message([&] { ops::all_gather(rt, s, send.data(), recv.get(), 0); }),
        HasSubstr("bytes_per_pe must be at least 1, got 0"));
    EXPECT_THAT(invalid_argument_message([&] { ops::all_gather(rt, s, nullptr, recv.get(), 10); }),
                HasSubstr("send is null"));
    EXPECT_THAT(
        invalid_argument_message([&] { ops::all_gather(rt, s, send.data(), local.data(), 10); }),
        HasSubstr("recv must point into the symmetric heap"));
    EXPECT_THAT(
        invalid_argument_message([&] { ops::all_gather(rt, s, send.data(), recv.get(), 129); }),
        HasSubstr("recv too small: needs n_pes * bytes_per_pe = 2 * 129 bytes"));
    EXPECT_THAT(invalid_argument_message(
                    [&] { ops::all_gather(rt, s, send.data(), recv.get() + 64, 100); }),
                HasSubstr("recv too small"));
    void* freed = rt.malloc(256);
    rt.free(freed);
    EXPECT_THAT(invalid_argument_message([&] { ops::all_gather(rt, s, send.data(), freed, 1); }),
                HasSubstr("not inside a live symmetric heap block"));
    // PE 1 asks for a different size: every PE learns who passed what.
    const std::size_t bytes = rt.pe() == 0 ? 50 : 60;
    EXPECT_THAT(
        invalid_argument_message([&] { ops::all_gather(rt, s, send.data(), recv.get(), bytes); }),
        HasSubstr("PEs disagree"));
    // The checks left nothing behind: a good call still works.
    ops::all_gather(rt, s, send.data(), recv.get(), 100);
    s.synchronize();
  });
}

TEST(AllGatherArguments, EnvironmentPicksTheAlgorithmAndRejectsUnknownNames) {
  EXPECT_EQ(ops::resolve_all_gather_algo(1, AllGatherAlgo::automatic), AllGatherAlgo::oneshot);
  EXPECT_EQ(ops::resolve_all_gather_algo(ops::kAllGatherRingThreshold, AllGatherAlgo::automatic),
            AllGatherAlgo::ring);
  ::setenv("TESSERA_ALLGATHER_ALGO", "ring", 1);
  EXPECT_EQ(ops::resolve_all_gather_algo(1, AllGatherAlgo::automatic), AllGatherAlgo::ring);
  EXPECT_EQ(ops::resolve_all_gather_algo(1, AllGatherAlgo::oneshot), AllGatherAlgo::oneshot);
  ::setenv("TESSERA_ALLGATHER_ALGO", "tree", 1);
  EXPECT_THAT(
      invalid_argument_message([] { ops::resolve_all_gather_algo(1, AllGatherAlgo::automatic); }),
      ::testing::HasSubstr("TESSERA_ALLGATHER_ALGO must be oneshot, ring or auto, got 'tree'"));
  ::unsetenv("TESSERA_ALLGATHER_ALGO");
}

}  // namespace
}  // namespace tessera::ops_test
