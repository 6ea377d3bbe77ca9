#include "idle_barrier.hpp"

#include <chrono>
#include <thread>
#include <vector>

#include "tessera/device/platform.hpp"

namespace tessera::bench {

namespace platform = device::platform;
using device::Scope;
using device::Sem;

IdleBarrier::IdleBarrier(Runtime& rt) : rt_(rt), word_(rt.alloc<std::uint64_t>(1)) {
  word_[0] = 0;
  counter_ = static_cast<std::uint64_t*>(rt.ptr(word_.get(), 0));
  // The counter is usable only when every PE maps PE 0's heap (one node): PEs must agree.
  std::vector<std::uint32_t> mapped(static_cast<std::size_t>(rt.n_pes()), 0);
  mapped[static_cast<std::size_t>(rt.pe())] = counter_ != nullptr ? 1 : 0;
  rt.bootstrap().allgather(mapped.data(), sizeof(std::uint32_t));
  for (std::uint32_t m : mapped) {
    if (m == 0) counter_ = nullptr;
  }
  rt.barrier();
}

void IdleBarrier::arrive_and_wait() {
  ++crossings_;
  if (counter_ == nullptr) {
    rt_.barrier();
    return;
  }
  platform::atomic_fetch_add<std::uint64_t>(counter_, 1, Sem::acq_rel, Scope::system);
  const std::uint64_t target = crossings_ * static_cast<std::uint64_t>(rt_.n_pes());
  while (platform::atomic_load(counter_, Sem::acquire, Scope::system) < target) {
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

}  // namespace tessera::bench
