// Host-side diagnostics name what the caller did (issue 17): a failed rt.barrier() is reported
// as "barrier" (not as the bootstrap exchange it is made of), and a finalize that finds kernels
// still in flight on the stream says so before it waits for them, within a bound.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <stdexcept>
#include <string>

#include "harness/expect_error.hpp"
#include "harness/run_pes.hpp"
#include "tessera/device.hpp"
#include "tessera/launch.hpp"
#include "tessera/tessera.hpp"

namespace {

namespace td = tessera::device;
using tessera::Error;
using tessera::ErrorCode;
using tessera::Runtime;
using tessera::harness::expect_error;
using tessera::harness::pe_options;
using tessera::harness::PeOptions;
using tessera::harness::run_threads;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// A one-shot flag one PE thread raises and another waits for, with a bound.
class Flag {
 public:
  void raise() {
    {
      std::lock_guard lock(mu_);
      up_ = true;
    }
    cv_.notify_all();
  }
  bool wait(std::chrono::milliseconds bound) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, bound, [&] { return up_; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool up_ = false;
};

// PE 0's barrier fails because PE 1 left the job without calling it; PE 0's error starts with
// "barrier: ". Fails before: "threads bootstrap: rank 1 has left the job" (no call named).
TEST(HostBarrier, PeerLeavingIsReportedAsAFailedBarrier) {
  auto group = tessera::make_threads_group(2);
  PeOptions o;
  o.heap_size = 1 << 20;
  std::string message;
  EXPECT_THROW(run_threads(2,
                           [&](int rank) {
                             Runtime rt = Runtime::init(pe_options(group, rank, o));
                             if (rank == 1) throw std::runtime_error("PE 1 leaves");
                             const Error e =
                                 expect_error(ErrorCode::peer_lost, [&] { rt.barrier(); });
                             message = e.message();
                             throw std::runtime_error("PE 0 leaves too");
                           }),
               std::runtime_error);
  EXPECT_THAT(message, StartsWith("barrier: ")) << message;
  EXPECT_THAT(message, HasSubstr("rank 1 has left the job")) << message;
}

// PE 0's barrier times out while PE 1 holds back; the timeout is reported as the barrier's.
// Fails before: "threads bootstrap: allgather did not complete within 300 ms".
TEST(HostBarrier, TimeoutIsReportedAsTheBarriers) {
  auto group = tessera::make_threads_group(2);
  PeOptions o;
  o.heap_size = 1 << 20;
  o.timeout = std::chrono::milliseconds(300);
  Flag failed;
  std::string message;
  EXPECT_THROW(run_threads(2,
                           [&](int rank) {
                             Runtime rt = Runtime::init(pe_options(group, rank, o));
                             if (rank == 1) {
                               EXPECT_TRUE(failed.wait(std::chrono::seconds(20)));
                               throw std::runtime_error("PE 1 leaves");
                             }
                             const Error e =
                                 expect_error(ErrorCode::timeout, [&] { rt.barrier(); });
                             message = e.message();
                             failed.raise();
                             throw std::runtime_error("PE 0 leaves");
                           }),
               std::runtime_error);
  EXPECT_THAT(message, StartsWith("barrier: ")) << message;
  EXPECT_THAT(message, HasSubstr("did not complete within 300 ms")) << message;
}

// Every PE launches a kernel that waits for a signal nobody sends and calls finalize without
// stream.synchronize(): finalize says at once that the stream still has work in flight and how
// to fix it, then ends within the timeout and a margin. Fails before: no such message (only a
// later "a failure on the default stream was never reported").
TEST(Finalize, KernelsStillInFlightAreNamedAndWaitedForWithABound) {
  PeOptions o;
  o.heap_size = 1 << 20;
  o.timeout = std::chrono::milliseconds(1000);
  std::atomic<int> finalized{0};
  ::testing::internal::CaptureStderr();
  const auto start = std::chrono::steady_clock::now();
  tessera::harness::run_pes(
      2,
      [&](Runtime& rt) {
        auto sig = rt.alloc<std::uint64_t>(1);
        std::uint64_t* s = sig.get();
        rt.barrier();
        const auto ctx = rt.device_context();
        tessera::launch(rt.stream(), 1, [=](td::Block g) {
          td::wait_until(g, ctx, s, td::Cmp::ge, 1);  // nobody signals
        });
        EXPECT_EQ(rt.stream().in_flight(), 1u);
        rt.finalize();  // `sig` goes after it, with the heap
        ++finalized;
      },
      o);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(finalized.load(), 2);
  EXPECT_LT(seconds, 1.0 + 5.0) << err;
  // The kernels' own waits end first, the first to expire with its own diagnostic (the other
  // PE's may end on the abort that one broadcasts).
  EXPECT_THAT(err, HasSubstr("never reported by Stream::synchronize(): wait_until on PE ")) << err;
  EXPECT_THAT(err, HasSubstr(" timed out after 1000 ms")) << err;
  for (int pe : {0, 1}) {
    EXPECT_THAT(err, HasSubstr("tessera[PE " + std::to_string(pe) +
                               "] WARN: finalize: the stream still has 1 operation(s) in flight "
                               "(kernels not synchronized); call stream.synchronize() before "
                               "finalize"))
        << err;
  }
}

// The kernels wait with a bound of their own far past TESSERA_TIMEOUT: finalize does not wait
// that long; past TESSERA_TIMEOUT + 1 s it ends this PE's waits through the abort word. Fails
// before: finalize waited the kernels' 60 s.
TEST(Finalize, KernelsWaitingPastTheTimeoutAreEndedWithinTheBound) {
  PeOptions o;
  o.heap_size = 1 << 20;
  o.timeout = std::chrono::milliseconds(500);
  ::testing::internal::CaptureStderr();
  const auto start = std::chrono::steady_clock::now();
  tessera::harness::run_pes(
      2,
      [&](Runtime& rt) {
        auto sig = rt.alloc<std::uint64_t>(1);
        std::uint64_t* s = sig.get();
        rt.barrier();
        auto ctx = rt.device_context();
        ctx.timeout_ns = std::uint64_t{60} * 1000 * 1000 * 1000;
        tessera::launch(rt.stream(), 1,
                        [=](td::Block g) { td::wait_until(g, ctx, s, td::Cmp::ge, 1); });
        rt.finalize();
      },
      o);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_LT(seconds, 1.5 + 5.0) << err;
  EXPECT_THAT(err, HasSubstr("did not finish within 1500 ms; ending this PE's waits")) << err;
}

}  // namespace
