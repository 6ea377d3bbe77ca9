// Bodies of barrier.hpp. The n-th barrier on a PE adds 1 (release) to the arrival counter of
// every PE and waits until its own counter reaches n * n_pes (acquire). A PE cannot enter
// barrier n + 1 before every PE entered barrier n, so the counter reaches n * n_pes only once
// all PEs have arrived at barrier n, however far ahead the fast ones are.
#pragma once

#include "tessera/device/barrier.hpp"
#include "tessera/device/impl/check.hpp"
#include "tessera/device/rma.hpp"
#include "tessera/device/signal.hpp"

namespace tessera::device {
namespace detail {

// The diagnostic of barrier #n timing out with the arrival counter at `seen`: names the PEs that
// have not entered it (from the kBarrierSeen words they write before arriving). Shared with the
// host's reading of a failure record (failure_record.hpp).
TESSERA_COLD TESSERA_HOST_DEVICE inline void describe_barrier_timeout(
    Message& m, const Context& ctx, const char* what, std::uint64_t n, std::uint64_t seen) {
  const std::uint64_t target = n * static_cast<std::uint64_t>(ctx.n_pes);
  m << what << " on PE " << ctx.my_pe << " timed out after "
    << static_cast<std::uint64_t>(ctx.timeout_ns / 1000000) << " ms in barrier #" << n
    << ": arrival counter (control area) awaited (value >= " << target << "), saw " << seen;
  if (ctx.n_pes <= Context::kBarrierSeenPes) {
    m << "; not yet entered by PE";
    int listed = 0;
    for (int pe = 0; pe < ctx.n_pes; ++pe) {
      const std::uint64_t entered = platform::atomic_load(
          &ctx.control_page[Context::kBarrierSeen + static_cast<std::size_t>(pe)], Sem::relaxed,
          Scope::system);
      if (entered >= n) continue;
      if (listed < 16) m << (listed == 0 ? " " : ", ") << pe << " (at #" << entered << ")";
      ++listed;
    }
    if (listed > 16) m << " and " << (listed - 16) << " more";
    if (listed == 0) m << " none (their arrivals are still in flight)";
  }
}

// Waits for the barrier's arrivals; on timeout names the PEs that have not entered barrier n
// (from the kBarrierSeen words they write before arriving).
TESSERA_KERNEL_CODE inline void barrier_wait(const Context& ctx, std::uint64_t n,
                                             const char* what) {
  std::uint64_t* arrivals = &ctx.control_page[Context::kBarrierArrivals];
  const std::uint64_t target = n * static_cast<std::uint64_t>(ctx.n_pes);
  SpinPacer pacer(ctx, what);
  for (std::uint32_t spins = 0;; ++spins) {
    if (platform::atomic_load(arrivals, Sem::acquire, Scope::system) >= target) return;
    if (!pacer.pause_and_check(spins)) continue;
    const std::uint64_t seen = platform::atomic_load(arrivals, Sem::acquire, Scope::system);
    if (seen >= target) return;
    broadcast_abort(ctx);
    Message m;
    describe_barrier_timeout(m, ctx, what, n, seen);
    platform::report_failure(FailureCode::timeout, m.c_str());
  }
}

template <class G>
TESSERA_KERNEL_CODE void barrier_impl(G g, const Context& ctx, const char* what) {
  g.sync();
  if (g.rank() == 0) {
    if (ctx.control_page == nullptr) {
      Message m;
      m << what << " on PE " << ctx.my_pe
        << ": the Context has no barrier counters (make it with Runtime::device_context())";
      platform::report_failure(FailureCode::invalid_argument, m.c_str());
    }
    check_abort(ctx, what);
    std::uint64_t* arrivals = &ctx.control_page[Context::kBarrierArrivals];
    std::uint64_t* entered = &ctx.control_page[Context::kBarrierEntered];
    const bool note_seen = ctx.my_pe < Context::kBarrierSeenPes;
    std::uint64_t* seen = &ctx.control_page[Context::kBarrierSeen +
                                            static_cast<std::size_t>(note_seen ? ctx.my_pe : 0)];
    const std::uint64_t n =
        platform::atomic_fetch_add(entered, std::uint64_t{1}, Sem::relaxed, Scope::device) + 1;
    for (int i = 0; i < ctx.n_pes; ++i) {
      const int pe = (ctx.my_pe + i) % ctx.n_pes;
      if (use_proxy(ctx, pe, what)) {
        // The barrier words lie past the user heap, at the same offset on every PE.
        if (note_seen) {
          proxy_push(ctx,
                     encode_proxy_atomic<std::uint64_t>(ProxyOp::atomic, ProxyAmo::store, pe,
                                                        ctx.heap_offset(seen), n, 0, false),
                     what);
        }
        proxy_push(ctx,
                   encode_proxy_atomic<std::uint64_t>(ProxyOp::atomic, ProxyAmo::add, pe,
                                                      ctx.heap_offset(arrivals), 1, 0, true),
                   what);
        continue;
      }
      // For diagnostics only: which barrier this PE has entered, ordered before its arrival.
      if (note_seen)
        platform::atomic_store(translate(ctx, seen, pe, what), n, Sem::relaxed, Scope::system);
      platform::atomic_fetch_add(translate(ctx, arrivals, pe, what), std::uint64_t{1}, Sem::release,
                                 Scope::system);
    }
    barrier_wait(ctx, n, what);
  }
  g.sync();
}

}  // namespace detail

template <class G>
TESSERA_KERNEL_CODE void barrier(G g, const Context& ctx) {
  quiet(g, ctx);
  detail::barrier_impl(g, ctx, "barrier");
}

template <class G>
TESSERA_KERNEL_CODE void sync(G g, const Context& ctx) {
  detail::barrier_impl(g, ctx, "sync");
}

}  // namespace tessera::device
