#include "launch/block_pool.hpp"

#include <atomic>
#include <cstdint>
#include <utility>

#include "tessera/device/platform.hpp"

namespace tessera::detail {
namespace {

// Completion of one grid, shared with the workers so none touches freed state. A worker may drop
// the last reference to it after the caller has returned, so it must hold no exception by then:
// a block's exception moves in under the lock and the caller moves it out under the lock, and the
// thread that reads the exception is the one that frees it. (Otherwise only exception_ptr's
// reference count, inside libstdc++, would order the free after the reads; TSan cannot see it.)
struct GridRun {
  std::mutex mu;
  std::condition_variable done;
  int remaining = 0;
  std::exception_ptr first;
  // grid_sync's arrival counter, shared by the grid's blocks (platform::HostLaunchSite).
  std::uint64_t grid_arrivals = 0;

  void finish(std::exception_ptr error) {
    std::lock_guard lock(mu);
    if (error && !first) first = std::move(error);
    error = nullptr;  // a later block's exception ends here, under the lock
    if (--remaining == 0) done.notify_all();
  }
};

// Runs fn(Block(b, grid)) with the thread's launch site (platform::host_launch_site) naming
// launch `id`, block b and the grid's grid_sync counter, and clears the site afterwards.
std::exception_ptr run_block(const std::function<void(device::Block)>& fn, int b, int grid,
                             std::uint64_t id, GridRun& run) {
  device::platform::host_launch_site = {id, b, &run.grid_arrivals, 0};
  std::exception_ptr error;
  try {
    const device::platform::SplitProbe probe(device::platform::SplitPart::kernel, grid);
    fn(device::Block(b, grid));
  } catch (...) {
    error = std::current_exception();
  }
  device::platform::host_launch_site = {};
  return error;
}

// Numbers launches (never 0) so that checked mode can tell two groups of one launch apart.
std::atomic<std::uint64_t> g_launches{0};

}  // namespace

BlockPool::~BlockPool() {
  for (auto& w : workers_) {
    {
      std::lock_guard lock(w->mu);
      w->stop = true;
    }
    w->cv.notify_one();
  }
  for (auto& w : workers_) w->thread.join();
}

void BlockPool::work(Worker& w) {
  std::unique_lock lock(w.mu);
  for (;;) {
    w.cv.wait(lock, [&] { return w.job != nullptr || w.stop; });
    if (!w.job) return;
    auto job = std::move(w.job);
    w.job = nullptr;
    lock.unlock();
    job();
    lock.lock();
  }
}

std::exception_ptr BlockPool::run(int grid, const std::function<void(device::Block)>& fn) {
  if (grid == 1) {
    // One block (every collective's launch): it runs here, with nothing shared to allocate;
    // its grid_sync counter lives on this frame, which outlives the block.
    std::uint64_t arrivals = 0;
    const std::uint64_t id = g_launches.fetch_add(1, std::memory_order_relaxed) + 1;
    device::platform::host_launch_site = {id, 0, &arrivals, 0};
    std::exception_ptr error;
    try {
      const device::platform::SplitProbe probe(device::platform::SplitPart::kernel, 1);
      fn(device::Block(0, 1));
    } catch (...) {
      error = std::current_exception();
    }
    device::platform::host_launch_site = {};
    return error;
  }
  while (static_cast<int>(workers_.size()) < grid - 1) {
    auto w = std::make_unique<Worker>();
    Worker* raw = w.get();
    w->thread = std::thread([raw] { work(*raw); });
    workers_.push_back(std::move(w));
  }
  auto run = std::make_shared<GridRun>();
  run->remaining = grid;
  const std::uint64_t id = g_launches.fetch_add(1, std::memory_order_relaxed) + 1;
  for (int b = 1; b < grid; ++b) {
    Worker& w = *workers_[static_cast<std::size_t>(b - 1)];
    {
      std::lock_guard lock(w.mu);
      w.job = [run, &fn, b, grid, id] { run->finish(run_block(fn, b, grid, id, *run)); };
    }
    w.cv.notify_one();
  }
  run->finish(run_block(fn, 0, grid, id, *run));
  std::unique_lock lock(run->mu);
  run->done.wait(lock, [&] { return run->remaining == 0; });
  return std::exchange(run->first, nullptr);
}

}  // namespace tessera::detail
