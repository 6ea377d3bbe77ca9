// The calls of Device API II: pointer, byte and scalar RMA forms (put/get/put_nbi/get_nbi/
// put_signal with a count, putmem/getmem, p/g), float and double atomic adds, waits that return
// what they saw (wait_until, wait_until_any with a status mask, wait_until_some), the tests
// (test, test_any, test_some, test_all) and Epoch::advance. Each behaviour runs for Thread, Warp
// and Block, with checked mode off and on, as PEs in threads of this process; ctest also runs the
// same binary as processes under tessera-run (TESSERA_CALLS_AS_PROCESSES=1, checked mode from
// TESSERA_CHECK), where every process is one PE and the suites share one Runtime.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "device_test_util.hpp"

namespace tessera::device_test {
namespace {

using harness::PeOptions;
using harness::run_pes;
using ::testing::AllOf;
using ::testing::HasSubstr;

// --- one harness for both modes ---

bool as_processes() { return env_flag("TESSERA_CALLS_AS_PROCESSES"); }

// The process's one PE when run as processes (ProcessPe).
[[maybe_unused]] ::testing::Environment* const kProcessEnv =
    process_pe_environment("TESSERA_CALLS_AS_PROCESSES");

// Runs fn(rt) on every PE: as `n` thread PEs once with checked mode off and once with it on, or,
// as processes, once on this process's PE (the job's size and TESSERA_CHECK decide). The PEs
// start and end together.
void on_pes(int n, const std::function<void(Runtime&)>& fn) {
  if (as_processes()) {
    Runtime& rt = ProcessPe::get();
    rt.barrier();
    fn(rt);
    rt.barrier();
    return;
  }
  for (bool checked : {false, true}) {
    SCOPED_TRACE(checked ? "TESSERA_CHECK=1" : "TESSERA_CHECK=0");
    PeOptions o;
    o.checked = checked;
    run_pes(n, fn, o);
  }
}

template <class G>
class Calls : public ::testing::Test {};
using Groups = ::testing::Types<td::Thread, td::Warp, td::Block>;
TYPED_TEST_SUITE(Calls, Groups);

// A value for element i of PE `pe`'s data in round `round`.
template <class T>
T pattern(int pe, std::size_t i, int round) {
  return static_cast<T>(static_cast<std::uint64_t>(pe) * 131 + i * 7 +
                        static_cast<unsigned>(round));
}

// --- pointer and byte forms ---

// Every PE puts runs of several lengths (1 element: the one-word path; odd lengths and odd
// starting elements: the ragged edges) into its right neighbour with put and put_nbi, and reads
// them back from its left neighbour with get and get_nbi.
TYPED_TEST(Calls, PointerPutAndGetMoveContiguousRunsOfAnyLength) {
  using G = TypeParam;
  on_pes(3, [](Runtime& rt) {
    const auto ctx = rt.device_context();
    const int me = rt.pe(), n = rt.n_pes();
    const int right = (me + 1) % n, left = (me + n - 1) % n;
    constexpr std::size_t kMax = 1000;
    auto inbox = rt.alloc<std::uint32_t>(kMax + 8);
    const std::size_t counts[] = {1, 2, 7, 64, 999};
    int round = 0;
    for (std::size_t count : counts) {
      for (std::size_t first : {std::size_t{0}, std::size_t{3}}) {
        ++round;
        std::vector<std::uint32_t> mine(kMax + 8), back(kMax + 8, 0xdeadbeef);
        for (std::size_t i = 0; i < mine.size(); ++i)
          mine[i] = pattern<std::uint32_t>(me, i, round);
        for (std::size_t i = 0; i < kMax + 8; ++i) inbox[i] = 0;
        rt.barrier();
        const bool nbi = round % 2 == 0;
        run_kernel<G>(rt, [&, ctx, nbi](G g) {
          if (nbi) {
            td::put_nbi(g, ctx, inbox.get() + first, mine.data() + first, count, right);
            td::quiet(g, ctx);
          } else {
            td::put(g, ctx, inbox.get() + first, mine.data() + first, count, right);
          }
        });
        rt.barrier();
        for (std::size_t i = 0; i < kMax + 8; ++i) {
          const bool inside = i >= first && i < first + count;
          ASSERT_EQ(inbox[i], inside ? pattern<std::uint32_t>(left, i, round) : 0u)
              << "count " << count << " first " << first << " element " << i;
        }
        run_kernel<G>(rt, [&, ctx, nbi](G g) {
          if (nbi) {
            td::get_nbi(g, ctx, back.data() + first, inbox.get() + first, count, left);
            td::quiet(g, ctx);
          } else {
            td::get(g, ctx, back.data() + first, inbox.get() + first, count, left);
          }
        });
        // My left neighbour's inbox holds what its own left neighbour sent.
        const int left2 = (left + n - 1) % n;
        for (std::size_t i = 0; i < kMax + 8; ++i) {
          const bool inside = i >= first && i < first + count;
          ASSERT_EQ(back[i], inside ? pattern<std::uint32_t>(left2, i, round) : 0xdeadbeefu)
              << "count " << count << " first " << first << " element " << i;
        }
        rt.barrier();
      }
    }
  });
}

TYPED_TEST(Calls, PutmemAndGetmemMoveOddByteCountsAtOddOffsets) {
  using G = TypeParam;
  on_pes(2, [](Runtime& rt) {
    const auto ctx = rt.device_context();
    const int me = rt.pe(), other = (me + 1) % rt.n_pes(),
              from = (me + rt.n_pes() - 1) % rt.n_pes();
    auto box = rt.alloc<unsigned char>(512);
    int round = 0;
    for (std::size_t bytes : {std::size_t{1}, std::size_t{3}, std::size_t{17}, std::size_t{333}}) {
      for (std::size_t at : {std::size_t{0}, std::size_t{5}}) {
        ++round;
        std::vector<unsigned char> mine(512), back(512, 0xee);
        for (std::size_t i = 0; i < mine.size(); ++i)
          mine[i] = pattern<unsigned char>(me, i, round);
        for (std::size_t i = 0; i < 512; ++i) box[i] = 0;
        rt.barrier();
        const bool nbi = round % 2 == 0;
        run_kernel<G>(rt, [&, ctx, nbi](G g) {
          if (nbi) {
            td::putmem_nbi(g, ctx, box.get() + at, mine.data() + at, bytes, other);
            td::quiet(g, ctx);
          } else {
            td::putmem(g, ctx, box.get() + at, mine.data() + at, bytes, other);
          }
        });
        rt.barrier();
        for (std::size_t i = 0; i < 512; ++i) {
          const bool inside = i >= at && i < at + bytes;
          ASSERT_EQ(box[i], inside ? pattern<unsigned char>(from, i, round) : 0u)
              << bytes << " bytes at " << at << ", byte " << i;
        }
        run_kernel<G>(rt, [&, ctx, nbi](G g) {
          if (nbi) {
            td::getmem_nbi(g, ctx, back.data() + at, box.get() + at, bytes, me);
            td::quiet(g, ctx);
          } else {
            td::getmem(g, ctx, back.data() + at, box.get() + at, bytes, me);
          }
        });
        for (std::size_t i = 0; i < 512; ++i) {
          const bool inside = i >= at && i < at + bytes;
          ASSERT_EQ(back[i], inside ? pattern<unsigned char>(from, i, round) : 0xeeu);
        }
        rt.barrier();
      }
    }
  });
}

// The pointer put_signal carries 12 epochs around the ring over one signal, never reset; the
// receiver's wait_until returns the epoch it saw and the data is complete once it has.
TYPED_TEST(Calls, PointerPutSignalDeliversTheRunBeforeTheSignal) {
  using G = TypeParam;
  on_pes(3, [](Runtime& rt) {
    const auto ctx = rt.device_context();
    const int me = rt.pe(), n = rt.n_pes();
    const int right = (me + 1) % n, left = (me + n - 1) % n;
    constexpr std::size_t kCount = 301;
    auto inbox = rt.alloc<double>(kCount);
    auto sigs = rt.alloc<std::uint64_t>(16);  // arrived at [0], consumed at [8]
    sigs[0] = sigs[8] = 0;                    // as processes the heap is reused from earlier tests
    rt.barrier();
    std::vector<double> mine(kCount);
    td::Epoch epoch;
    for (int call = 0; call < 12; ++call) {
      const std::uint64_t e = epoch.next();
      for (std::size_t i = 0; i < kCount; ++i) mine[i] = pattern<double>(me, i, call);
      std::uint64_t seen = 0;
      const bool nbi = call % 2 == 1;
      run_kernel<G>(rt, [&, ctx, e, nbi](G g) {
        td::wait_until(g, ctx, &sigs[8], td::Cmp::ge, e - 1);  // right has read call e - 1
        if (nbi) {
          td::put_signal_nbi(g, ctx, inbox.get(), mine.data(), kCount, &sigs[0], e,
                             td::SignalOp::set, right);
          td::quiet(g, ctx);
        } else {
          td::put_signal(g, ctx, inbox.get(), mine.data(), kCount, &sigs[0], e, td::SignalOp::set,
                         right);
        }
        seen = td::wait_until(g, ctx, &sigs[0], td::Cmp::ge, e);
      });
      EXPECT_EQ(seen, e);
      for (std::size_t i = 0; i < kCount; ++i)
        ASSERT_EQ(inbox[i], pattern<double>(left, i, call)) << "call " << e;
      run_kernel<G>(rt, [&, ctx, e](G) { td::signal(ctx, &sigs[8], e, td::SignalOp::set, left); });
    }
    rt.barrier();
  });
}

// --- scalar forms ---

template <class T>
void expect_p_and_g(Runtime& rt, T* box, int round) {
  const auto ctx = rt.device_context();
  const int me = rt.pe(), n = rt.n_pes();
  const int right = (me + 1) % n, left = (me + n - 1) % n;
  const T mine = pattern<T>(me, sizeof(T), round);
  run_kernel<td::Thread>(rt, [&, ctx](td::Thread) { td::p(ctx, box, mine, right); });
  rt.barrier();
  EXPECT_EQ(*box, pattern<T>(left, sizeof(T), round)) << sizeof(T) << "-byte p";
  T got{};
  run_kernel<td::Thread>(rt, [&, ctx](td::Thread) { got = td::g(ctx, box, right); });
  EXPECT_EQ(got, pattern<T>(me, sizeof(T), round)) << sizeof(T) << "-byte g";
  rt.barrier();
}

TEST(Calls, ScalarPAndGMoveOneValueOfEveryWidth) {
  on_pes(3, [](Runtime& rt) {
    auto b8 = rt.alloc<std::uint8_t>(1);
    auto b16 = rt.alloc<std::int16_t>(1);
    auto f32 = rt.alloc<float>(1);
    auto f64 = rt.alloc<double>(1);
    auto u64 = rt.alloc<std::uint64_t>(1);
    for (int round = 1; round <= 3; ++round) {
      expect_p_and_g(rt, b8.get(), round);
      expect_p_and_g(rt, b16.get(), round);
      expect_p_and_g(rt, f32.get(), round);
      expect_p_and_g(rt, f64.get(), round);
      expect_p_and_g(rt, u64.get(), round);
    }
  });
}

// --- float atomics ---

// Every PE adds to the float and double words of every PE whose heap it maps (all of them, but
// under the fabric suites, which split the PEs into nodes) 200 times, values exact in binary so
// the sum is exact whatever the order; fetch_add's results are partial sums below the total.
TEST(Calls, FloatAndDoubleAtomicAddsSumExactlyAcrossPes) {
  on_pes(4, [](Runtime& rt) {
    const auto ctx = rt.device_context();
    auto words = rt.alloc<double>(2);  // [0]: the double sum; [1]: holds the float
    auto* f = reinterpret_cast<float*>(&words[1]);
    words[0] = 0;
    *f = 0;
    rt.barrier();
    constexpr int kAdds = 200;
    std::vector<double> before;
    int mapped_peers = 0;  // the same from both sides: mapping follows the node
    for (int p = 0; p < ctx.n_pes; ++p)
      if (p != ctx.my_pe && ctx.is_mapped(p)) ++mapped_peers;
    run_kernel<td::Block>(rt, [&, ctx](td::Block) {
      for (int i = 0; i < kAdds; ++i) {
        for (int p = 0; p < ctx.n_pes; ++p) {
          if (!ctx.is_mapped(p)) continue;
          td::atomic_add(ctx, f, 0.5f, p);
          before.push_back(td::atomic_fetch_add(ctx, &words[0], 0.25, p));
        }
        // The same on myself with narrower scopes and other orders, allowed on the own PE.
        td::atomic_add(ctx, f, 0.5f, ctx.my_pe, td::Sem::relaxed, td::Scope::device);
        (void)td::atomic_fetch_add(ctx, &words[0], 0.25, ctx.my_pe, td::Sem::release,
                                   td::Scope::block);
      }
    });
    rt.barrier();
    const double adds = static_cast<double>(kAdds) * (mapped_peers + 2);
    EXPECT_EQ(*f, static_cast<float>(0.5 * adds));
    EXPECT_EQ(words[0], 0.25 * adds);
    for (double b : before) {
      EXPECT_GE(b, 0.0);
      EXPECT_LT(b, 0.25 * adds);
    }
    rt.barrier();
  });
}

// Under the fabric suites (PEs split into nodes), a float add to a peer on another node is
// refused by name; with every peer mapped there is nothing to refuse.
TEST(Calls, FloatAddToAPeerBehindTheNetworkProxyIsRefused) {
  on_pes(4, [](Runtime& rt) {
    const auto ctx = rt.device_context();
    auto word = rt.alloc<float>(1);
    float* w = word.get();
    for (int p = 0; p < ctx.n_pes; ++p) {
      if (!ctx.via_proxy(p)) continue;
      launch(rt.stream(), 1, [=](td::Block) { td::atomic_add(ctx, w, 1.0f, p); });
      Error e = expect_error(ErrorCode::invalid_argument, [&] { rt.stream().synchronize(); });
      EXPECT_THAT(e.message(),
                  HasSubstr("atomic_add on PE " + std::to_string(ctx.my_pe) + ": PE " +
                            std::to_string(p) + " is reached through the network proxy"));
    }
    rt.barrier();
  });
}

// --- waits and tests ---

TYPED_TEST(Calls, WaitUntilReturnsTheValueThatSatisfiedIt) {
  using G = TypeParam;
  on_pes(2, [](Runtime& rt) {
    const auto ctx = rt.device_context();
    auto sig = rt.alloc<std::uint64_t>(1);
    sig[0] = 0;
    rt.barrier();
    if (rt.pe() == 1) {
      run_kernel<G>(rt, [&, ctx](G) { td::signal(ctx, sig.get(), 7, td::SignalOp::set, 0); });
    } else if (rt.pe() == 0) {
      std::uint64_t seen = 0, relaxed = 0;
      run_kernel<G>(rt, [&, ctx](G g) {
        seen = td::wait_until(g, ctx, sig.get(), td::Cmp::ge, 5);
        relaxed = td::wait_until(g, ctx, sig.get(), td::Cmp::ne, 0, td::Sem::relaxed);
      });
      EXPECT_EQ(seen, 7u);
      EXPECT_EQ(relaxed, 7u);
    }
    rt.barrier();
  });
}

TEST(Calls, TestsReadSignalsWithoutWaiting) {
  on_pes(2, [](Runtime& rt) {
    const auto ctx = rt.device_context();
    auto sigs = rt.alloc<std::uint64_t>(4);
    for (int i = 0; i < 4; ++i) sigs[static_cast<std::size_t>(i)] = 0;
    rt.barrier();
    run_kernel<td::Thread>(rt, [&, ctx](td::Thread) {
      const std::uint64_t* s = sigs.get();
      EXPECT_FALSE(td::test(ctx, s, td::Cmp::ge, 1));
      EXPECT_EQ(td::test_any(ctx, s, 4, td::Cmp::ne, 0), td::npos);
      EXPECT_FALSE(td::test_all(ctx, s, 4, td::Cmp::ge, 1));
      EXPECT_TRUE(td::test_all(ctx, s, 4, td::Cmp::eq, 0));
      EXPECT_TRUE(td::test_all(ctx, s, 0, td::Cmp::ne, 0));  // vacuously
    });
    rt.barrier();
    // My left neighbour raises words 1 and 3 of mine.
    run_kernel<td::Thread>(rt, [&, ctx](td::Thread) {
      const int other = (ctx.my_pe + 1) % ctx.n_pes;
      td::signal(ctx, &sigs[1], 4, td::SignalOp::set, other);
      td::signal(ctx, &sigs[3], 9, td::SignalOp::add, other);
    });
    rt.barrier();
    run_kernel<td::Thread>(rt, [&, ctx](td::Thread) {
      const std::uint64_t* s = sigs.get();
      EXPECT_TRUE(td::test(ctx, &s[1], td::Cmp::eq, 4));
      EXPECT_FALSE(td::test(ctx, &s[1], td::Cmp::gt, 4, td::Sem::relaxed));
      EXPECT_EQ(td::test_any(ctx, s, 4, td::Cmp::ne, 0), 1u);
      EXPECT_EQ(td::test_any(ctx, s, 4, td::Cmp::gt, 4), 3u);
      EXPECT_FALSE(td::test_all(ctx, s, 4, td::Cmp::ne, 0));
      EXPECT_TRUE(td::test_all(ctx, &s[3], 1, td::Cmp::ge, 9));
      // The status forms skip what was taken and mark what they return.
      int status[4] = {0, 1, 0, 0};
      EXPECT_EQ(td::test_any(ctx, s, 4, status, td::Cmp::ne, 0), 3u);
      EXPECT_EQ(status[3], 1);
      EXPECT_EQ(td::test_any(ctx, s, 4, status, td::Cmp::ne, 0), td::npos);
      int status2[4] = {0, 0, 0, 0};
      std::size_t idx[4] = {9, 9, 9, 9};
      EXPECT_EQ(td::test_some(ctx, s, 4, status2, idx, td::Cmp::ne, 0), 2u);
      EXPECT_EQ(idx[0], 1u);
      EXPECT_EQ(idx[1], 3u);
      EXPECT_EQ(td::test_some(ctx, s, 4, status2, idx, td::Cmp::ne, 0), 0u);
      EXPECT_EQ(status2[0], 0);
      EXPECT_EQ(status2[1], 1);
      EXPECT_EQ(status2[3], 1);
    });
    rt.barrier();
  });
}

// PE 0 drains one arrival per other PE from its slot array, in whatever order they come, with
// wait_until_some (and, in a second round, wait_until_any with a status mask): every slot is
// reported exactly once and no signal is ever reset; the second round waits for epoch 2 on the
// same signals.
TYPED_TEST(Calls, WaitUntilSomeAndAnyDrainEveryArrivalOnceWithoutResets) {
  using G = TypeParam;
  on_pes(4, [](Runtime& rt) {
    const auto ctx = rt.device_context();
    const int me = rt.pe(), n = rt.n_pes();
    auto slots = rt.alloc<std::uint64_t>(static_cast<std::size_t>(n));
    auto payload = rt.alloc<std::uint64_t>(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i)
      slots[static_cast<std::size_t>(i)] = payload[static_cast<std::size_t>(i)] = 0;
    rt.barrier();
    for (std::uint64_t e = 1; e <= 2; ++e) {
      if (me != 0) {
        const std::uint64_t mine = e * 1000 + static_cast<std::uint64_t>(me);
        run_kernel<G>(rt, [&, ctx, mine, e](G g) {
          td::put_signal(g, ctx, &payload[static_cast<std::size_t>(ctx.my_pe)], &mine, 1,
                         &slots[static_cast<std::size_t>(ctx.my_pe)], e, td::SignalOp::set, 0);
        });
      } else {
        std::vector<int> status(static_cast<std::size_t>(n), 0);
        status[0] = 1;  // no arrival from myself
        std::vector<std::size_t> indices(static_cast<std::size_t>(n), 99);
        std::vector<int> times_seen(static_cast<std::size_t>(n), 0);
        std::size_t all_masked = 99, none_left = 99;
        run_kernel<G>(rt, [&, ctx, e](G g) {
          const std::size_t count = static_cast<std::size_t>(ctx.n_pes);
          for (int taken = 1; taken < ctx.n_pes;) {
            if (e == 1) {
              const std::size_t k = td::wait_until_some(g, ctx, slots.get(), count, status.data(),
                                                        indices.data(), td::Cmp::ge, e);
              for (std::size_t j = 0; j < k; ++j) ++times_seen[indices[j]];
              taken += static_cast<int>(k);
            } else {
              const std::size_t i =
                  td::wait_until_any(g, ctx, slots.get(), count, status.data(), td::Cmp::ge, e);
              ++times_seen[i];
              ++taken;
            }
          }
          // Everything taken: both return at once.
          all_masked = td::wait_until_some(g, ctx, slots.get(), count, status.data(),
                                           indices.data(), td::Cmp::ge, e);
          none_left = td::wait_until_any(g, ctx, slots.get(), count, status.data(), td::Cmp::ge, e);
        });
        EXPECT_EQ(all_masked, 0u);
        EXPECT_EQ(none_left, td::npos);
        for (int p = 1; p < n; ++p) {
          EXPECT_EQ(times_seen[static_cast<std::size_t>(p)], 1) << "PE " << p << " epoch " << e;
          EXPECT_EQ(status[static_cast<std::size_t>(p)], 1);
          EXPECT_EQ(payload[static_cast<std::size_t>(p)], e * 1000 + static_cast<std::uint64_t>(p));
        }
        EXPECT_EQ(times_seen[0], 0);
      }
      rt.barrier();
    }
  });
}

TYPED_TEST(Calls, GroupedWaitUntilAnyReturnsTheLowestSatisfiedIndex) {
  using G = TypeParam;
  on_pes(2, [](Runtime& rt) {
    const auto ctx = rt.device_context();
    auto sigs = rt.alloc<std::uint64_t>(4);
    for (std::size_t i = 0; i < 4; ++i) sigs[i] = 0;
    rt.barrier();
    if (rt.pe() == 1) {
      run_kernel<G>(rt, [&, ctx](G) {
        td::signal(ctx, &sigs[3], 1, td::SignalOp::set, 0);
        td::signal(ctx, &sigs[2], 1, td::SignalOp::set, 0);
      });
    }
    rt.barrier();
    if (rt.pe() == 0) {
      std::size_t which = 99, old_form = 99;
      run_kernel<G>(rt, [&, ctx](G g) {
        which = td::wait_until_any(g, ctx, sigs.get(), 4, td::Cmp::ne, 0);
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
        if (g.rank() == 0) old_form = td::wait_until_any(ctx, sigs.get(), 4, td::Cmp::ne, 0);
#pragma GCC diagnostic pop
      });
      EXPECT_EQ(which, 2u);
      EXPECT_EQ(old_form, 2u);
    }
    rt.barrier();
  });
}

TEST(Calls, EpochAdvanceSkipsAheadByN) {
  td::Epoch e;
  EXPECT_EQ(e.next(), 1u);
  EXPECT_EQ(e.advance(4), 5u);
  EXPECT_EQ(e.current(), 5u);
  EXPECT_EQ(e.next(), 6u);
  EXPECT_EQ(e.advance(0), 6u);
}

// --- failure paths (threads only: a failing wait aborts the job for every PE) ---

PeOptions checked_options(bool checked) {
  PeOptions o;
  o.checked = checked;
  o.timeout = std::chrono::milliseconds(300);
  return o;
}

class CallsErrors : public ::testing::Test {
 protected:
  void SetUp() override {
    if (as_processes()) GTEST_SKIP() << "failure paths run with PEs as threads";
  }
};

TEST_F(CallsErrors, StatusMaskedCallsRefuseNullArrays) {
  run_pes(1, [](Runtime& rt) {
    const auto ctx = rt.device_context();
    auto sigs = rt.alloc<std::uint64_t>(2);
    std::uint64_t* s = sigs.get();
    int status[2] = {0, 0};
    launch(rt.stream(), 1, [=](td::Block g) {
      std::size_t idx[2];
      (void)td::wait_until_some(g, ctx, s, 2, nullptr, idx, td::Cmp::ge, 1);
    });
    Error e = expect_error(ErrorCode::invalid_argument, [&] { rt.stream().synchronize(); });
    EXPECT_THAT(e.message(), HasSubstr("wait_until_some on PE 0: status is null; it must point to "
                                       "2 local ints"));
    launch(rt.stream(), 1, [=, &status](td::Block g) {
      (void)td::wait_until_some(g, ctx, s, 2, status, nullptr, td::Cmp::ge, 1);
    });
    e = expect_error(ErrorCode::invalid_argument, [&] { rt.stream().synchronize(); });
    EXPECT_THAT(e.message(), HasSubstr("wait_until_some on PE 0: indices is null"));
    launch(rt.stream(), 1, [=](td::Block g) {
      (void)td::wait_until_any(g, ctx, s, 2, static_cast<int*>(nullptr), td::Cmp::ge, 1);
    });
    e = expect_error(ErrorCode::invalid_argument, [&] { rt.stream().synchronize(); });
    EXPECT_THAT(e.message(), HasSubstr("wait_until_any on PE 0: status is null"));
    launch(rt.stream(), 1, [=](td::Block) {
      std::size_t idx[2];
      (void)td::test_some(ctx, s, 2, nullptr, idx, td::Cmp::ge, 1);
    });
    e = expect_error(ErrorCode::invalid_argument, [&] { rt.stream().synchronize(); });
    EXPECT_THAT(e.message(), HasSubstr("test_some on PE 0: status is null"));
    launch(rt.stream(), 1,
           [=](td::Block g) { (void)td::wait_until_any(g, ctx, s, 0, td::Cmp::ge, 1); });
    e = expect_error(ErrorCode::invalid_argument, [&] { rt.stream().synchronize(); });
    EXPECT_THAT(e.message(), HasSubstr("wait_until_any on PE 0: no signals to wait for (n == 0)"));
  });
}

// A wait_until_some that nothing satisfies times out naming the awaited signals (the masked one
// left out) and their values.
TEST_F(CallsErrors, WaitUntilSomeTimesOutNamingTheAwaitedSignals) {
  run_pes(
      1,
      [](Runtime& rt) {
        const auto ctx = rt.device_context();
        auto sigs = rt.alloc<std::uint64_t>(3);
        sigs[0] = 5;
        sigs[1] = 1;
        sigs[2] = 2;
        std::uint64_t* s = sigs.get();
        launch(rt.stream(), 1, [=](td::Block g) {
          int status[3] = {1, 0, 0};
          std::size_t idx[3];
          (void)td::wait_until_some(g, ctx, s, 3, status, idx, td::Cmp::ge, 5);
        });
        Error e = expect_error(ErrorCode::timeout, [&] { rt.stream().synchronize(); });
        EXPECT_THAT(e.message(),
                    AllOf(HasSubstr("wait_until_some on PE 0 timed out after 300 ms"),
                          HasSubstr("none of 2 awaited signals (of 3) from signal at heap offset"),
                          HasSubstr("reached (value >= 5); saw [1]=1 [2]=2")));
      },
      checked_options(false));
}

// A float add to a peer reached through the network proxy is refused with a message before
// anything is queued (the ring carries integer atomics only). The Context is made by hand: PE 1
// unmapped, a proxy channel present.
TEST_F(CallsErrors, FloatAddThroughTheProxyIsRefused) {
  alignas(8) double word = 0;
  char* bases[2] = {reinterpret_cast<char*>(&word), nullptr};
  td::ProxyChannel* fake_proxy = reinterpret_cast<td::ProxyChannel*>(&word);
  td::Context ctx{};
  ctx.my_pe = 0;
  ctx.n_pes = 2;
  ctx.peer_base = bases;
  ctx.heap_size = sizeof(word);
  ctx.proxy = fake_proxy;
  try {
    td::atomic_add(ctx, reinterpret_cast<float*>(&word), 1.0f, 1);
    ADD_FAILURE() << "no failure";
  } catch (const td::Failure& f) {
    EXPECT_EQ(f.code(), td::FailureCode::invalid_argument);
    EXPECT_THAT(std::string(f.what()),
                HasSubstr("atomic_add on PE 0: PE 1 is reached through the network proxy, which "
                          "carries integer atomics only; a float add needs a peer whose heap is "
                          "mapped here"));
  }
  try {
    (void)td::atomic_fetch_add(ctx, &word, 1.0, 1);
    ADD_FAILURE() << "no failure";
  } catch (const td::Failure& f) {
    EXPECT_THAT(std::string(f.what()),
                HasSubstr("atomic_fetch_add on PE 0: PE 1 is reached through the network proxy"));
    EXPECT_THAT(std::string(f.what()), HasSubstr("a double add"));
  }
}

// The new forms name themselves in the always-on PE check and in checked mode's heap check.
TEST_F(CallsErrors, NewFormsNameThemselvesInDiagnostics) {
  run_pes(
      2,
      [](Runtime& rt) {
        const auto ctx = rt.device_context();
        auto buf = rt.alloc<int>(4);
        int* b = buf.get();
        std::vector<int> local(100000);  // more than buf's block, rounded up as it may be
        int* l = local.data();
        std::vector<std::uint64_t> local_sigs(2);
        const std::uint64_t* ls = local_sigs.data();
        const std::string on_me = " on PE " + std::to_string(rt.pe());
        launch(rt.stream(), 1, [=](td::Block) { td::p(ctx, b, 1, 5); });
        Error e = expect_error(ErrorCode::invalid_argument, [&] { rt.stream().synchronize(); });
        EXPECT_THAT(e.message(), HasSubstr("p" + on_me + ": target PE 5 is outside [0, 2)"));
        launch(rt.stream(), 1, [=](td::Block) { (void)td::g(ctx, b, -1); });
        e = expect_error(ErrorCode::invalid_argument, [&] { rt.stream().synchronize(); });
        EXPECT_THAT(e.message(), HasSubstr("g" + on_me + ": target PE -1 is outside [0, 2)"));
        launch(rt.stream(), 1, [=](td::Block g) { td::putmem(g, ctx, b, l, 16, 2); });
        e = expect_error(ErrorCode::invalid_argument, [&] { rt.stream().synchronize(); });
        EXPECT_THAT(e.message(), HasSubstr("putmem" + on_me + ": target PE 2 is outside"));
        // Checked mode: a destination off the heap, and a run past its allocation.
        launch(rt.stream(), 1, [=](td::Block) { td::p(ctx, l, 1, 0); });
        e = expect_error(ErrorCode::invalid_argument, [&] { rt.stream().synchronize(); });
        EXPECT_THAT(e.message(), AllOf(HasSubstr("p" + on_me + ": destination tile"),
                                       HasSubstr("not inside the symmetric heap")));
        launch(rt.stream(), 1, [=](td::Block g) { td::get(g, ctx, l, b, 100000, 0); });
        e = expect_error(ErrorCode::invalid_argument, [&] { rt.stream().synchronize(); });
        EXPECT_THAT(e.message(), AllOf(HasSubstr("get" + on_me + ": source tile"),
                                       HasSubstr("runs past the end of its allocation")));
        launch(rt.stream(), 1, [=](td::Block g) { td::getmem(g, ctx, l, b, 400000, 0); });
        e = expect_error(ErrorCode::invalid_argument, [&] { rt.stream().synchronize(); });
        EXPECT_THAT(e.message(), HasSubstr("getmem" + on_me + ": source tile"));
        launch(rt.stream(), 1, [=](td::Block) { (void)td::test_any(ctx, ls, 1, td::Cmp::eq, 0); });
        e = expect_error(ErrorCode::invalid_argument, [&] { rt.stream().synchronize(); });
        EXPECT_THAT(e.message(), HasSubstr("test_any" + on_me + ": signals"));
        rt.barrier();
      },
      checked_options(true));
}

}  // namespace
}  // namespace tessera::device_test
