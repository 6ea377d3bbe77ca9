// The network proxy tickets a communication context's operations took, so that the context's
// quiet waits for exactly those (OpenSHMEM: shmem_ctx_quiet completes the context's operations,
// not every context's). Operations on mapped PEs are complete when their call returns; only
// proxied ones (other nodes) leave tickets behind.
//
// Every context shares the PE's one proxy ring, whose tickets are handed out in order: a call
// through a context takes the tickets in [ring.reserve before, ring.reserve after). When threads
// share a context or call others at the same time, that range may hold other threads' tickets,
// which the context's quiet then waits for too (more than it must, never less). Ticket t is
// complete once its slot's state has reached t + n_slots (proxy_wire.hpp: the proxy frees a
// plain descriptor's slot for the next lap; a fetching one's issuer does that before its call
// returns), a state no later lap goes below. Internal.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

#include "tessera/device/impl/proxy_producer.hpp"
#include "tessera/device/impl/wait.hpp"
#include "tessera/device/proxy_wire.hpp"

namespace tessera::shmem {

class ContextTickets {
 public:
  // The ring's next ticket, before a call through the context.
  static std::uint64_t next(const device::ProxyChannel* ring) {
    return device::platform::atomic_load(&ring->reserve, device::Sem::acquire,
                                         device::Scope::system);
  }

  // After the call: remembers the tickets taken since `begin` (from next()), if any.
  void record(const device::ProxyChannel* ring, std::uint64_t begin) {
    const std::uint64_t end = next(ring);
    if (end == begin) return;
    const std::lock_guard<std::mutex> lock(mutex_);
    if (!ranges_.empty() && ranges_.back().end >= begin && ranges_.back().begin <= begin) {
      if (end > ranges_.back().end) ranges_.back().end = end;
      return;
    }
    ranges_.push_back({begin, end});
    // Bounded memory: forget what the proxy completed in order; past that, join the two oldest
    // ranges (waiting for the tickets between them as well is allowed).
    if (ranges_.size() > kMaxRanges) {
      const std::uint64_t done = device::platform::atomic_load(
          &ring->completed, device::Sem::acquire, device::Scope::system);
      std::erase_if(ranges_, [&](const Range& r) { return r.end <= done; });
      if (ranges_.size() > kMaxRanges) {
        ranges_[1].begin = ranges_[0].begin;
        ranges_.erase(ranges_.begin());
      }
    }
  }

  // Waits (bounded by `w`: the job's timeout, its abort word, the proxy's failure) until every
  // remembered ticket completed, then forgets them. Failures are reported as device failures
  // naming `what`.
  void quiet(device::ProxyChannel* ring, const device::detail::WaitWatch& w, const char* what) {
    std::vector<Range> ranges;
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      ranges.swap(ranges_);
    }
    for (const Range& r : ranges) {
      for (std::uint64_t t = r.begin; t < r.end; ++t) {
        if (device::platform::atomic_load(&ring->completed, device::Sem::acquire,
                                          device::Scope::system) >= r.end)
          break;
        device::detail::ring_wait(w, &ring->slots()[t % ring->n_slots].seq,
                                  device::proxy_slot_next_lap(t, ring->n_slots), false, what);
      }
    }
  }

  // Tickets (in ranges) not yet waited for; for tests.
  std::size_t pending_ranges() {
    const std::lock_guard<std::mutex> lock(mutex_);
    return ranges_.size();
  }

  static constexpr std::size_t kMaxRanges = 1024;

 private:
  struct Range {
    std::uint64_t begin, end;
  };
  std::mutex mutex_;
  std::vector<Range> ranges_;
};

}  // namespace tessera::shmem
