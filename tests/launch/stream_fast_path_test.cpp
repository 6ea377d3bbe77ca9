// The stream's fast paths: synchronize() runs queued work on its own thread (no executor
// wake-up to wait for), the executor takes over what a synchronize leaves, and order, failures
// and wait_for behave as with the executor alone.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

#include "tessera/error.hpp"
#include "tessera/launch.hpp"
#include "tessera/stream.hpp"

namespace tessera {
namespace {

// Waits (bounded, no sleep) until `done` holds; false after 10 s.
template <class Done>
bool eventually(Done done) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!done()) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::yield();
  }
  return true;
}

TEST(StreamFastPath, QueuedWorkBehindABusyTaskRunsOnceInOrder) {
  Stream s(0);
  std::atomic<bool> release{false};
  std::atomic<int> running{0};
  std::vector<int> log;
  s.enqueue([&] {
    while (!release.load()) std::this_thread::yield();
  });
  for (int i = 0; i < 100; ++i) {
    if (i % 2 == 0) {
      s.enqueue([&, i] {
        EXPECT_EQ(running.fetch_add(1), 0) << "two tasks of one stream ran at once";
        log.push_back(i);
        running.fetch_sub(1);
      });
    } else {
      launch(s, 1 + i % 3, [&, i](device::Block b) {
        if (b.block_id() == 0) log.push_back(i);
      });
    }
  }
  std::thread releaser([&] {
    EXPECT_TRUE(eventually([&] { return s.in_flight() == 101; }));
    release = true;
  });
  s.synchronize();
  releaser.join();
  ASSERT_EQ(log.size(), 100u);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(log[static_cast<std::size_t>(i)], i);
  EXPECT_EQ(s.in_flight(), 0u);
}

TEST(StreamFastPath, WorkEnqueuedDuringASynchronizeStillRunsWithoutAnother) {
  Stream s(0);
  for (int round = 0; round < 50; ++round) {
    std::atomic<bool> later_ran{false};
    // The task enqueues more work: synchronize waits only for what was enqueued before it, so
    // whichever thread ran this task, the executor must run the later one by itself.
    s.enqueue([&] { s.enqueue([&] { later_ran = true; }); });
    s.synchronize();
    ASSERT_TRUE(s.wait_idle(std::chrono::seconds(10))) << "round " << round;
    EXPECT_TRUE(later_ran.load()) << "round " << round;
  }
}

TEST(StreamFastPath, ThreadsEnqueuingAndSynchronizingAtOnceKeepEachThreadsOrder) {
  Stream s(0);
  constexpr int kThreads = 4, kTasks = 200;
  std::atomic<int> running{0};
  std::vector<std::vector<int>> logs(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kTasks; ++i) {
        s.enqueue([&, t, i] {
          EXPECT_EQ(running.fetch_add(1), 0) << "two tasks of one stream ran at once";
          logs[static_cast<std::size_t>(t)].push_back(i);
          running.fetch_sub(1);
        });
        if (i % 7 == t) s.synchronize();
      }
      s.synchronize();
      // Everything this thread enqueued ran before its last synchronize returned.
      EXPECT_EQ(logs[static_cast<std::size_t>(t)].size(), static_cast<std::size_t>(kTasks));
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) {
    const auto& log = logs[static_cast<std::size_t>(t)];
    ASSERT_EQ(log.size(), static_cast<std::size_t>(kTasks));
    for (int i = 0; i < kTasks; ++i) EXPECT_EQ(log[static_cast<std::size_t>(i)], i);
  }
}

TEST(StreamFastPath, AFailureRunByTheSynchronizingThreadIsItsToReport) {
  Stream s(3);
  for (int round = 0; round < 20; ++round) {
    int after = 0;
    s.enqueue([] { throw std::runtime_error("task failed"); });
    s.enqueue([&] { ++after; });
    try {
      s.synchronize();
      ADD_FAILURE() << "expected tessera::Error";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::internal);
      EXPECT_NE(std::string(e.what()).find("work on a stream threw: task failed"),
                std::string::npos)
          << e.what();
    }
    EXPECT_EQ(after, 0) << "work after a failure is skipped until synchronize";
    s.enqueue([&] { ++after; });
    s.synchronize();
    EXPECT_EQ(after, 1);
  }
}

TEST(StreamFastPath, WaitForHoldsTheWaitingStreamsLaterWork) {
  Stream a(0), b(0);
  std::atomic<bool> release{false};
  std::atomic<int> step{0};
  int b_saw = -1;
  a.enqueue([&] {
    while (!release.load()) std::this_thread::yield();
    step = 1;
  });
  b.wait_for(a);
  b.enqueue([&] { b_saw = step.load(); });
  std::thread releaser([&] {
    EXPECT_TRUE(eventually([&] { return b.in_flight() == 2 || b.in_flight() == 1; }));
    release = true;
  });
  b.synchronize();
  releaser.join();
  EXPECT_EQ(b_saw, 1);
  a.synchronize();
}

}  // namespace
}  // namespace tessera
