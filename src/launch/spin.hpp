// Bounded spinning for the host launch path: a thread that expects a condition to turn true
// within microseconds (the next task of a stream, the end of the task a synchronize waits for)
// polls it for at most a bound before it blocks on a condition variable, so a hand-off that
// arrives in time costs no futex wake-up and no scheduler delay. Internal.
#pragma once

#include <chrono>
#include <cstdint>
#include <thread>

namespace tessera::detail {

// How long the executor of a stream polls for more work after its queue drains, and how long
// synchronize() polls for the running task before sleeping. Short: on a host with fewer cores
// than threads every microsecond spent polling is taken from a thread doing work.
inline constexpr std::chrono::microseconds kExecutorSpin{5};
inline constexpr std::chrono::microseconds kSynchronizeSpin{50};
// After work last arrived, for kExecutorDoze the executor wakes on a timer every kExecutorPoll
// instead of being notified by enqueue (a futex wake and a thread switch per call otherwise);
// then it sleeps until notified. kExecutorPoll bounds how late work nobody synchronizes on starts.
inline constexpr std::chrono::microseconds kExecutorPoll{50};
inline constexpr std::chrono::milliseconds kExecutorDoze{2};

// Polls `done` for at most `bound`: the first turns with the CPU's pause hint, later ones
// yielding the core (a peer thread on this core may be the one to make `done` true). True when
// `done` turned true within the bound.
template <class Done>
bool spin_for(std::chrono::microseconds bound, Done&& done) {
  if (done()) return true;
  const auto until = std::chrono::steady_clock::now() + bound;
  for (std::uint32_t turn = 0;; ++turn) {
    if (turn < 32) {
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#endif
    } else {
      std::this_thread::yield();
    }
    if (done()) return true;
    if ((turn & 7) == 7 && std::chrono::steady_clock::now() >= until) return false;
  }
}

}  // namespace tessera::detail
