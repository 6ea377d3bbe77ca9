// GridBarrier: a spin barrier among the blocks of one grid (or the plain threads of a limit
// measurement), so a kernel can time each iteration of a loop separately: every party arrives,
// then all leave together. Counts arrivals in one word of host memory shared by the parties;
// the n-th crossing waits for n * parties arrivals, so the word is never reset.
#pragma once

#include <cstdint>

#include "tessera/device/order.hpp"
#include "tessera/device/platform.hpp"

namespace tessera::bench {

class GridBarrier {
 public:
  // `word` is zero before the first crossing and shared by all `parties`.
  GridBarrier(std::uint64_t* word, int parties)
      : word_(word), parties_(static_cast<std::uint64_t>(parties)) {}

  void arrive_and_wait() {
    namespace platform = device::platform;
    using device::Scope;
    using device::Sem;
    ++crossings_;
    if (parties_ == 1) return;
    platform::atomic_fetch_add<std::uint64_t>(word_, 1, Sem::acq_rel, Scope::device);
    const std::uint64_t target = crossings_ * parties_;
    for (std::uint32_t spins = 0;
         platform::atomic_load(word_, Sem::acquire, Scope::device) < target; ++spins) {
      platform::spin_pause(spins);
    }
  }

 private:
  std::uint64_t* word_;
  std::uint64_t parties_;
  std::uint64_t crossings_ = 0;
};

}  // namespace tessera::bench
