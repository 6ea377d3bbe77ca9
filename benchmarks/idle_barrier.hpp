// IdleBarrier: a barrier over all PEs whose waiters sleep between polls, so a PE with nothing to
// do leaves the cores to the PE being measured (a bootstrap barrier under MPI busy-polls, and
// this machine has fewer cores than PEs x blocks). Counts arrivals in a word of PE 0's heap;
// falls back to Runtime::barrier when some PE does not map PE 0's heap.
#pragma once

#include <cstdint>

#include "tessera/runtime.hpp"

namespace tessera::bench {

class IdleBarrier {
 public:
  // Collective (allocates the counter).
  explicit IdleBarrier(Runtime& rt);

  // Returns on every PE once all PEs have called it as often as this one; heap writes made
  // before it are visible after it.
  void arrive_and_wait();

 private:
  Runtime& rt_;
  Symmetric<std::uint64_t> word_;
  std::uint64_t* counter_ = nullptr;  // PE 0's word, as mapped here
  std::uint64_t crossings_ = 0;
};

}  // namespace tessera::bench
