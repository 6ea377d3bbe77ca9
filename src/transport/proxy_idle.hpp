// How the proxy thread waits between polls (DESIGN §6). A signal through the proxy crosses the
// ring and the CQ of both PEs several times (write, delivery, signal), so every microsecond a
// proxy sleeps while work is arriving lands on the latency several times; yet a proxy that spins
// forever takes a core from the PEs' own threads, and machines running the host backend have
// fewer cores than threads. So the proxy spins right after work, yields its core for a while,
// and only then naps, the longer the idler:
//   - operations in flight, or work within kSpin: spin (pause), then yield; never nap while the
//     NIC owes completions (their age check bounds that);
//   - idle for less than kYield: yield (costs a core only when nobody else wants it);
//   - idle for less than kWarm: nap for kWarmNap (a burst of work usually resumes soon);
//   - idler: nap for kColdNap, or block on the CQ's wait object where the provider has one
//     (tcp: it wakes when a peer's data arrives, so serving peers costs no latency).
// Pure, so it is tested without a fabric. Internal.
#pragma once

#include <chrono>

namespace tessera::detail {

enum class ProxyWait {
  spin,      // poll again after a pause instruction
  yield,     // poll again after sched_yield
  warm_nap,  // sleep kWarmNap
  cold_nap,  // sleep kColdNap (or wait on the CQ up to that long)
};

struct ProxyIdlePolicy {
  static constexpr std::chrono::microseconds kSpin{50};
  static constexpr std::chrono::microseconds kYield{2000};
  static constexpr std::chrono::milliseconds kWarm{50};
  static constexpr std::chrono::microseconds kWarmNap{50};
  static constexpr std::chrono::microseconds kColdNap{1000};

  // What to do after a poll that found nothing, `idle` after the last work, with `in_flight`
  // operations owing completions.
  static constexpr ProxyWait next(std::chrono::nanoseconds idle, bool in_flight) {
    if (idle < kSpin) return ProxyWait::spin;
    if (in_flight || idle < kYield) return ProxyWait::yield;
    if (idle < kWarm) return ProxyWait::warm_nap;
    return ProxyWait::cold_nap;
  }
};

}  // namespace tessera::detail
