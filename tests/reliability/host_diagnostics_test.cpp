// Host-side diagnostics name what the caller did (issue 17): a failed rt.barrier() is reported
// as "barrier" (not as the bootstrap exchange it is made of).
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

}  // namespace
