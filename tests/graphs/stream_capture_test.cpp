// Stream::begin_capture / end_capture / Graph::launch on the host backend: captured work runs
// only when the graph is launched, in its order, as often as launched; streams that join a
// capture replay their part; the misuses are errors that say what to do; failures of replayed
// work are reported by synchronize(). Then the device-API pattern under replay (DeviceEpoch,
// put_signal, wait_until, barrier), and its mutant: the same kernel with the epoch passed as a
// kernel argument, which the replay harness must catch.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "harness/expect_error.hpp"
#include "harness/run_pes.hpp"
#include "replay.hpp"
#include "tessera/device.hpp"
#include "tessera/launch.hpp"

namespace tessera::graphs_test {
namespace {

namespace td = tessera::device;
using ::testing::HasSubstr;

TEST(StreamCapture, CapturedWorkRunsOnlyWhenLaunchedInOrderEachTime) {
  Stream stream(0);
  std::vector<int> log;
  stream.begin_capture();
  EXPECT_TRUE(stream.capturing());
  stream.enqueue([&] { log.push_back(1); });
  launch(stream, 3, [&](td::Block b) {
    if (b.block_id() == 0) log.push_back(2);
  });
  stream.enqueue([&] { log.push_back(3); });
  Graph graph = stream.end_capture();
  EXPECT_FALSE(stream.capturing());
  EXPECT_EQ(graph.size(), 3u);
  EXPECT_TRUE(static_cast<bool>(graph));
  stream.synchronize();
  EXPECT_TRUE(log.empty()) << "captured work ran during the capture";
  for (int r = 0; r < 1000; ++r) graph.launch(stream);
  stream.synchronize();
  ASSERT_EQ(log.size(), 3000u);
  for (std::size_t i = 0; i < log.size(); ++i) ASSERT_EQ(log[i], static_cast<int>(i % 3) + 1);
}

TEST(StreamCapture, ReplaysOnAnyHostStreamAfterItsEarlierWork) {
  Stream a(0), b(0);
  std::vector<char> log;
  a.begin_capture();
  a.enqueue([&] { log.push_back('g'); });
  Graph graph = a.end_capture();
  b.enqueue([&] { log.push_back('b'); });
  graph.launch(b);
  b.enqueue([&] { log.push_back('a'); });
  b.synchronize();
  EXPECT_EQ(std::string(log.begin(), log.end()), "bga");
}

TEST(StreamCapture, AJoinedStreamReplaysItsPartOrderedBetweenTheOriginsWork) {
  Stream origin(0), side(0);
  std::atomic<int> step{0};
  std::vector<std::string> errors;
  auto expect_step = [&](int want) {
    const int seen = step.fetch_add(1);
    if (seen % 3 != want) errors.push_back("step " + std::to_string(seen));
  };
  origin.begin_capture();
  origin.enqueue([&] { expect_step(0); });
  side.wait_for(origin);  // joins the capture
  EXPECT_TRUE(side.capturing());
  side.enqueue([&] { expect_step(1); });
  origin.wait_for(side);
  origin.enqueue([&] { expect_step(2); });
  Graph graph = origin.end_capture();
  EXPECT_FALSE(side.capturing());
  EXPECT_EQ(graph.size(), 5u);  // three tasks and two waits
  for (int r = 0; r < 1000; ++r) graph.launch(origin);
  origin.synchronize();
  side.synchronize();
  EXPECT_EQ(step.load(), 3000);
  EXPECT_TRUE(errors.empty()) << errors.front();
}

TEST(StreamCapture, MisuseIsAnErrorThatSaysWhatToDo) {
  Stream s(3), other(3);
  EXPECT_THAT(
      harness::expect_error(ErrorCode::invalid_argument, [&] { (void)s.end_capture(); }).what(),
      HasSubstr("not capturing"));
  EXPECT_THAT(harness::expect_error(ErrorCode::invalid_argument, [&] { Graph{}.launch(s); }).what(),
              HasSubstr("holds no work"));
  s.begin_capture();
  EXPECT_THAT(harness::expect_error(ErrorCode::invalid_argument, [&] { s.begin_capture(); }).what(),
              HasSubstr("capturing already"));
  const Error sync = harness::expect_error(ErrorCode::invalid_argument, [&] { s.synchronize(); });
  EXPECT_THAT(sync.what(), HasSubstr("end_capture() first"));
  EXPECT_EQ(sync.pe(), 3);
  // A capturing stream may not wait for work outside its capture.
  EXPECT_THAT(harness::expect_error(ErrorCode::invalid_argument, [&] { s.wait_for(other); }).what(),
              HasSubstr("not capturing"));
  // A stream that joined and was not waited for again.
  other.wait_for(s);
  other.enqueue([] {});
  EXPECT_THAT(
      harness::expect_error(ErrorCode::invalid_argument, [&] { (void)s.end_capture(); }).what(),
      HasSubstr("was not waited for again"));
  // The failed end still ended the capture on both streams.
  EXPECT_FALSE(s.capturing());
  EXPECT_FALSE(other.capturing());
  s.synchronize();
  other.synchronize();
}

TEST(StreamCapture, AFailureOfReplayedWorkIsReportedBySynchronizeAndTheNextReplayRuns) {
  Stream s(1);
  int runs = 0;
  bool fail = false;
  s.begin_capture();
  s.enqueue([&] {
    ++runs;
    if (fail) throw Error(ErrorCode::timeout, 1, "replayed work failed");
  });
  Graph graph = s.end_capture();
  graph.launch(s);
  s.synchronize();
  fail = true;
  graph.launch(s);
  EXPECT_THAT(harness::expect_error(ErrorCode::timeout, [&] { s.synchronize(); }).what(),
              HasSubstr("replayed work failed"));
  fail = false;
  graph.launch(s);
  s.synchronize();
  EXPECT_EQ(runs, 3);
}

TEST(StreamCapture, AGraphLaunchedDuringACaptureIsRecordedThere) {
  Stream s(0);
  int runs = 0;
  s.begin_capture();
  s.enqueue([&] { ++runs; });
  Graph inner = s.end_capture();
  s.begin_capture();
  inner.launch(s);
  inner.launch(s);
  Graph outer = s.end_capture();
  EXPECT_EQ(runs, 0);
  EXPECT_EQ(outer.size(), 2u);
  outer.launch(s);
  s.synchronize();
  EXPECT_EQ(runs, 2);
}

TEST(StreamCapture, AMovedFromGraphHoldsNothing) {
  Stream s(0);
  s.begin_capture();
  s.enqueue([] {});
  Graph a = s.end_capture();
  Graph b = std::move(a);
  EXPECT_FALSE(static_cast<bool>(a));  // NOLINT(bugprone-use-after-move): what is tested
  EXPECT_EQ(b.size(), 1u);
  harness::expect_error(ErrorCode::invalid_argument, [&] { a.launch(s); });
  b.launch(s);
  s.synchronize();
}

// The device-API pattern under replay: each PE puts its tile to the next PE and signals it with
// the call's epoch, waits for its own tile, copies it out, and leaves through a barrier (no PE
// puts the next call's tile before its receiver has copied this one). The epoch is counted in
// device memory (DeviceEpoch), so every replay waits for that replay's tile.
constexpr std::size_t kTile = 64;

struct RingShift {
  TESSERA_KERNEL_CODE void operator()(td::Block blk, td::Context ctx, td::DeviceEpoch count,
                                      int* box, std::uint64_t* sig, const int* in, int* out) const {
    const std::uint64_t epoch = count.next(blk);
    shift(blk, ctx, epoch, box, sig, in, out);
  }
  TESSERA_KERNEL_CODE static void shift(td::Block blk, const td::Context& ctx, std::uint64_t epoch,
                                        int* box, std::uint64_t* sig, const int* in, int* out) {
    const int next = (ctx.my_pe + 1) % ctx.n_pes;
    td::put_signal(blk, ctx, box, in, kTile, sig, epoch, td::SignalOp::set, next);
    td::wait_until(blk, ctx, sig, td::Cmp::ge, epoch);
    for (std::size_t i = static_cast<std::size_t>(blk.rank()); i < kTile;
         i += static_cast<std::size_t>(blk.size())) {
      out[i] = box[i];
    }
    td::barrier(blk, ctx);
  }
};

// The mutant: the epoch is a kernel argument computed on the host when the call is made, so a
// captured call replays with the epoch it had at capture.
struct RingShiftHostEpoch {
  TESSERA_KERNEL_CODE void operator()(td::Block blk, td::Context ctx, std::uint64_t epoch, int* box,
                                      std::uint64_t* sig, const int* in, int* out) const {
    RingShift::shift(blk, ctx, epoch, box, sig, in, out);
  }
};

// Captures one ring shift (device epoch, or the mutant's host epoch) and replays it; throws
// ReplayFailure at the first wrong result.
void replay_ring_shift(Runtime& rt, bool host_epoch, const ReplayOptions& opts) {
  auto box = rt.alloc<int>(kTile);
  auto sig = rt.alloc<std::uint64_t>(1);
  auto count = rt.alloc<std::uint64_t>(td::DeviceEpoch::kWords);
  for (std::size_t i = 0; i < td::DeviceEpoch::kWords; ++i) count[i] = 0;
  sig[0] = 0;
  rt.barrier();
  std::vector<int> in(kTile), out(kTile);
  td::Epoch host_count;
  const int prev = (rt.pe() + rt.n_pes() - 1) % rt.n_pes();
  auto call = [&](Stream& s) {
    if (host_epoch) {
      launch(s, 1, RingShiftHostEpoch{}, rt.device_context(), host_count.next(), box.get(),
             sig.get(), static_cast<const int*>(in.data()), out.data());
    } else {
      launch(s, 1, RingShift{}, rt.device_context(), td::DeviceEpoch{count.get()}, box.get(),
             sig.get(), static_cast<const int*>(in.data()), out.data());
    }
  };
  auto write = [&](int r) {
    for (std::size_t i = 0; i < kTile; ++i) in[i] = value(rt.pe(), r, i);
  };
  auto check = [&](int r) -> std::string {
    for (std::size_t i = 0; i < kTile; ++i) {
      if (out[i] != value(prev, r, i)) {
        return "element " + std::to_string(i) + " is " + std::to_string(out[i]) + ", PE " +
               std::to_string(prev) + " sent " + std::to_string(value(prev, r, i));
      }
    }
    return "";
  };
  capture_and_replay(rt, call, write, check, opts);
}

TEST(DeviceApiUnderReplay, DeviceEpochPutSignalWaitAndBarrierReplay1000Times) {
  for (int n : {2, 4}) {
    harness::run_pes(n, [](Runtime& rt) { replay_ring_shift(rt, false, {}); });
  }
}

TEST(DeviceApiUnderReplay, DeviceEpochReplaysWithOnePeDelayed) {
  ReplayOptions opts;
  opts.replays = 100;
  opts.delayed_pe = 0;
  opts.delay = std::chrono::microseconds(500);
  harness::run_pes(2, [&](Runtime& rt) { replay_ring_shift(rt, false, opts); });
}

// The mutant must fail: once the delayed PE 0 is late, PE 1's wait for the frozen epoch is
// already satisfied by the previous replay's signal, and it copies out the previous tile.
TEST(DeviceApiUnderReplay, TheMutantWithAHostEpochArgumentFailsTheReplayCheck) {
  ReplayOptions opts;
  opts.replays = 20;
  opts.delayed_pe = 0;
  opts.delay = std::chrono::milliseconds(20);
  harness::PeOptions pe_options;
  pe_options.timeout = std::chrono::milliseconds(3000);
  try {
    harness::run_pes(
        2, [&](Runtime& rt) { replay_ring_shift(rt, true, opts); }, pe_options);
    ADD_FAILURE() << "the host-epoch mutant passed 20 replays with a delayed PE";
  } catch (const ReplayFailure& e) {
    EXPECT_THAT(e.what(), HasSubstr("PE 1, replay 2 of 20"));
  }
}

}  // namespace
}  // namespace tessera::graphs_test
