// The threads that run a Stream's blocks: one per block of the widest grid so far, reused across
// launches, joined on destruction.
#pragma once

#include <condition_variable>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "tessera/device/group.hpp"

namespace tessera::detail {

class BlockPool {
 public:
  BlockPool() = default;
  ~BlockPool();
  BlockPool(const BlockPool&) = delete;
  BlockPool& operator=(const BlockPool&) = delete;

  // Runs fn(Block(b, grid)) for every b at once: block 0 on the calling thread, the others on
  // pool threads (grown as needed). Returns when all have returned, with the first exception
  // a block threw (null if none).
  std::exception_ptr run(int grid, const std::function<void(device::Block)>& fn);

 private:
  struct Worker {
    std::thread thread;
    std::mutex mu;
    std::condition_variable cv;
    std::function<void()> job;
    bool stop = false;
  };
  static void work(Worker& w);
  std::vector<std::unique_ptr<Worker>> workers_;
};

}  // namespace tessera::detail
