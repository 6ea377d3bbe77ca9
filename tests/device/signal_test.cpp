// put_signal, signal, wait_until (every comparison), wait_until_any/all, signal_fetch, epochs
// (device_suites.hpp's kernels, run by suite_runner.hpp), and the host-only calls: signal from
// host code, the stream-ordered host mirrors.
#include <cstdint>
#include <vector>

#include "suite_runner.hpp"

namespace tessera::device_test {
namespace {

using harness::run_pes;

// put_signal(_nbi) over twenty epochs, wait_until for every comparison, wait_until_all/any,
// for Thread, Warp and Block: device_suites.hpp (the same kernels run on the GPU).
class Signal : public ::testing::TestWithParam<suites::Case> {};

TEST_P(Signal, Case) { run_suite_case(GetParam()); }

INSTANTIATE_TEST_SUITE_P(Suite, Signal, ::testing::ValuesIn(suites::kSignalCases), suite_case_name);

// Host-only: signals from host code, and the host's stream-ordered mirrors.
TEST(SignalHost, SignalFetchReadsTheLatestValue) {
  TESSERA_SKIP_ACROSS_PROCESSES();
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

TEST(SignalHost, HostMirrorsMoveDataInStreamOrder) {
  TESSERA_SKIP_ACROSS_PROCESSES();
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
