// GridBarrier: a spin barrier among the blocks of one grid (or the plain threads of a limit
// measurement), so a kernel can time each iteration of a loop separately: every party arrives,
// then all leave together. Counts arrivals in one word shared by the parties (host memory, or
// device memory for a GPU grid); the n-th crossing waits for n * parties arrivals, so the word is
// never reset.
#pragma once

#include <cstdint>

#include "tessera/device/group.hpp"
#include "tessera/device/order.hpp"
#include "tessera/device/platform.hpp"

namespace tessera::bench {

class GridBarrier {
 public:
  // `word` is zero before the first crossing and shared by all `parties`.
  TESSERA_HOST_DEVICE GridBarrier(std::uint64_t* word, int parties)
      : word_(word), parties_(static_cast<std::uint64_t>(parties)) {}

  // Called by every thread of group `g` (one party): the group's rank 0 arrives for it, and the
  // whole group leaves once every party has arrived.
  template <class G>
  TESSERA_KERNEL_CODE void arrive_and_wait(G g) {
    namespace platform = device::platform;
    using device::Scope;
    using device::Sem;
    ++crossings_;
    if (parties_ == 1) return;
    g.sync();
    if (g.rank() == 0) {
      platform::atomic_fetch_add<std::uint64_t>(word_, 1, Sem::acq_rel, Scope::device);
      const std::uint64_t target = crossings_ * parties_;
      for (std::uint32_t spins = 0;
           platform::atomic_load(word_, Sem::acquire, Scope::device) < target; ++spins) {
        platform::spin_pause(spins);
      }
    }
    g.sync();
  }

  // A plain thread as one party.
  void arrive_and_wait() { arrive_and_wait(device::Thread{}); }

 private:
  std::uint64_t* word_;
  std::uint64_t parties_;
  std::uint64_t crossings_ = 0;
};

}  // namespace tessera::bench
