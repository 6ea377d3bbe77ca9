// put_signal, signal, wait_until (every comparison), wait_until_any/all, signal_fetch, epochs.
#include <cstdint>
#include <vector>

#include "device_test_util.hpp"

namespace tessera::device_test {
namespace {

using harness::run_pes;

template <class G>
class Signal : public ::testing::Test {};
using Groups = ::testing::Types<td::Thread, td::Warp, td::Block>;
TYPED_TEST_SUITE(Signal, Groups);

// Every PE passes a tile to its right neighbour 20 times over the same signal, never reset:
// with set, the n-th call signals n; with add, every PE adds 1 to every PE's counter.
TYPED_TEST(Signal, PutSignalSetAndAddCarryTwentyEpochsWithoutReset) {
  using G = TypeParam;
  run_pes(4, [](Runtime& rt) {
    constexpr std::size_t kRows = 6, kCols = 10;
    const auto ctx = rt.device_context();
    const int me = rt.pe(), n = rt.n_pes();
    const int right = (me + 1) % n, left = (me + n - 1) % n;
    auto inbox = rt.alloc<std::uint32_t>(kRows * kCols);
    auto from_all = rt.alloc<std::uint32_t>(static_cast<std::size_t>(n) * kCols);
    auto arrived = rt.alloc<std::uint64_t>(2);
    rt.barrier();
    std::vector<std::uint32_t> mine(kRows * kCols);
    td::Epoch epoch;
    for (int call = 0; call < 20; ++call) {
      const std::uint64_t e = epoch.next();
      for (std::size_t i = 0; i < mine.size(); ++i)
        mine[i] = static_cast<std::uint32_t>(e * 1000 + static_cast<unsigned>(me) * 100 + i);
      const bool nbi = call % 2 == 1;
      run_kernel<G>(rt, [&, ctx, e, nbi](G g) {
        td::Tile<std::uint32_t> dst(inbox.get(), kRows, kCols);
        td::Tile<const std::uint32_t> src(mine.data(), kRows, kCols);
        if (nbi) {
          td::put_signal_nbi(g, ctx, dst, src, &arrived[0], e, td::SignalOp::set, right);
        } else {
          td::put_signal(g, ctx, dst, src, &arrived[0], e, td::SignalOp::set, right);
        }
        // One row into my row of every PE's from_all, each adding 1 to its counter.
        for (int p = 0; p < ctx.n_pes; ++p) {
          td::put_signal(
              g, ctx, td::make_tile(from_all.get() + static_cast<std::size_t>(me) * kCols, kCols),
              td::make_tile<const std::uint32_t>(mine.data(), kCols), &arrived[1], 1,
              td::SignalOp::add, p);
        }
        if (nbi) td::quiet(g, ctx);
        td::wait_until(g, ctx, &arrived[0], td::Cmp::ge, e);
        td::wait_until(g, ctx, &arrived[1], td::Cmp::ge, e * static_cast<std::uint64_t>(ctx.n_pes));
      });
      EXPECT_EQ(td::signal_fetch(&arrived[0]), e);
      for (std::size_t i = 0; i < kRows * kCols; ++i)
        ASSERT_EQ(inbox[i], e * 1000 + static_cast<unsigned>(left) * 100 + i) << "call " << e;
      for (int p = 0; p < n; ++p)
        for (std::size_t c = 0; c < kCols; ++c)
          ASSERT_EQ(from_all[static_cast<std::size_t>(p) * kCols + c],
                    e * 1000 + static_cast<unsigned>(p) * 100 + c);
      rt.barrier();  // nobody sends call e + 1 before everyone has checked call e
    }
    EXPECT_EQ(td::signal_fetch(&arrived[1]), 20u * static_cast<unsigned>(n));
  });
}

struct CmpCase {
  td::Cmp cmp;
  std::uint64_t initial, awaited, final_value;
};

TYPED_TEST(Signal, WaitUntilReturnsOnlyOnceEveryComparisonHolds) {
  using G = TypeParam;
  const CmpCase cases[] = {{td::Cmp::eq, 0, 7, 7},   {td::Cmp::ne, 5, 5, 6},
                           {td::Cmp::gt, 3, 3, 4},   {td::Cmp::ge, 3, 4, 4},
                           {td::Cmp::lt, 10, 10, 9}, {td::Cmp::le, 10, 9, 9}};
  run_pes(2, [&](Runtime& rt) {
    const auto ctx = rt.device_context();
    auto sig = rt.alloc<std::uint64_t>(1);
    auto payload = rt.alloc<std::uint64_t>(1);
    for (const CmpCase& c : cases) {
      SCOPED_TRACE(td::to_string(c.cmp));
      ASSERT_FALSE(td::compare(c.cmp, c.initial, c.awaited));
      ASSERT_TRUE(td::compare(c.cmp, c.final_value, c.awaited));
      sig[0] = c.initial;
      payload[0] = 0;
      rt.barrier();
      if (rt.pe() == 1) {
        // The payload, then the signal with release: PE 0 must see the payload after waiting.
        run_kernel<G>(rt, [&, ctx](G g) {
          td::put(g, ctx, td::make_tile(payload.get(), 1),
                  td::make_tile<const std::uint64_t>(&c.final_value, 1), 0);
          td::fence(g, ctx);
          td::signal(ctx, sig.get(), c.final_value, td::SignalOp::set, 0);
        });
      } else {
        run_kernel<G>(rt, [&, ctx](G g) { td::wait_until(g, ctx, sig.get(), c.cmp, c.awaited); });
        EXPECT_EQ(td::signal_fetch(sig.get()), c.final_value);
        EXPECT_EQ(payload[0], c.final_value);
      }
      rt.barrier();
    }
  });
}

TYPED_TEST(Signal, WaitUntilAllAndAnySeeTheRightSignals) {
  using G = TypeParam;
  run_pes(4, [](Runtime& rt) {
    const auto ctx = rt.device_context();
    const int n = rt.n_pes();
    auto sigs = rt.alloc<std::uint64_t>(static_cast<std::size_t>(n));
    auto any = rt.alloc<std::uint64_t>(4);
    rt.barrier();
    // Every PE sets its own word on every PE; every PE waits for all of them.
    run_kernel<G>(rt, [&, ctx](G g) {
      for (int p = 0; p < ctx.n_pes; ++p)
        td::signal(ctx, &sigs[static_cast<std::size_t>(ctx.my_pe)], 10 + ctx.my_pe,
                   td::SignalOp::set, p);
      td::wait_until_all(g, ctx, sigs.get(), static_cast<std::size_t>(ctx.n_pes), td::Cmp::ge, 10);
    });
    for (int p = 0; p < n; ++p) EXPECT_EQ(sigs[static_cast<std::size_t>(p)], 10u + p);
    rt.barrier();
    // PE 3 raises word 2 of PE 0's `any` array; PE 0 learns which one.
    if (rt.pe() == 3) {
      run_kernel<G>(rt, [&, ctx](G) { td::signal(ctx, &any[2], 1, td::SignalOp::add, 0); });
    } else if (rt.pe() == 0) {
      std::size_t which = 99;
      run_kernel<G>(
          rt, [&, ctx](G g) { which = td::wait_until_any(g, ctx, any.get(), 4, td::Cmp::ne, 0); });
      EXPECT_EQ(which, 2u);
      EXPECT_EQ(td::signal_fetch(&any[2]), 1u);
    }
    rt.barrier();
  });
}

TEST(Signal, SignalFetchReadsTheLatestValue) {
  run_pes(2, [](Runtime& rt) {
    const auto ctx = rt.device_context();
    auto sig = rt.alloc<std::uint64_t>(1);
    rt.barrier();
    const int other = 1 - rt.pe();
    if (rt.pe() == 0) {
      td::signal(ctx, sig.get(), 41, td::SignalOp::set, other);
      td::signal(ctx, sig.get(), 1, td::SignalOp::add, other);
    }
    rt.barrier();
    EXPECT_EQ(td::signal_fetch(sig.get()), rt.pe() == 1 ? 42u : 0u);
    rt.barrier();
  });
}

TEST(Signal, HostMirrorsMoveDataInStreamOrder) {
  run_pes(2, [](Runtime& rt) {
    const auto ctx = rt.device_context();
    auto box = rt.alloc<int>(16);
    auto sig = rt.alloc<std::uint64_t>(1);
    rt.barrier();
    const int other = 1 - rt.pe();
    std::vector<int> mine(16), back(16, -1);
    for (int i = 0; i < 16; ++i) mine[static_cast<std::size_t>(i)] = rt.pe() * 100 + i;
    auto& s = rt.stream();
    put_signal_on_stream(s, ctx, td::make_tile(box.get(), 4, 4),
                         td::make_tile<const int>(mine.data(), 4, 4), sig.get(), 1,
                         td::SignalOp::set, other);
    wait_until_on_stream(s, ctx, sig.get(), td::Cmp::ge, 1);
    // Ordered after the wait: my box now holds the other PE's tile; read it back from myself.
    get_on_stream(s, ctx, td::make_tile(back.data(), 16), td::make_tile<const int>(box.get(), 16),
                  rt.pe());
    s.synchronize();
    for (int i = 0; i < 16; ++i) EXPECT_EQ(back[static_cast<std::size_t>(i)], other * 100 + i);
    rt.barrier();
    put_on_stream(s, ctx, td::make_tile(box.get(), 16), td::make_tile<const int>(mine.data(), 16),
                  other);
    quiet_on_stream(s, ctx);
    barrier_on_stream(s, ctx);
    signal_on_stream(s, ctx, sig.get(), 5, td::SignalOp::add, other);
    std::uint64_t seen = 0;  // the value the wait saw: 1 (set), then + 5
    wait_until_on_stream(s, ctx, sig.get(), td::Cmp::ge, 6, &seen);
    s.synchronize();
    EXPECT_EQ(seen, 6u);
    for (int i = 0; i < 16; ++i) EXPECT_EQ(box[static_cast<std::size_t>(i)], other * 100 + i);
    rt.barrier();
  });
}

}  // namespace
}  // namespace tessera::device_test
