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

template <class G>
TESSERA_DEVICE void barrier_impl(G g, const Context& ctx, const char* what) {
  g.sync();
  if (g.rank() == 0) {
    if (ctx.barrier_words == nullptr) {
      Message m;
      m << what << " on PE " << ctx.my_pe
        << ": the Context has no barrier counters (make it with Runtime::device_context())";
      platform::report_failure(FailureCode::invalid_argument, m.c_str());
    }
    std::uint64_t* arrivals = &ctx.barrier_words[Context::kBarrierArrivals];
    std::uint64_t* entered = &ctx.barrier_words[Context::kBarrierEntered];
    const std::uint64_t n =
        platform::atomic_fetch_add(entered, std::uint64_t{1}, Sem::relaxed, Scope::device) + 1;
    for (int i = 0; i < ctx.n_pes; ++i) {
      const int pe = (ctx.my_pe + i) % ctx.n_pes;
      if (use_proxy(ctx, pe, what)) {
        // The barrier words lie past the user heap, at the same offset on every PE.
        ProxyDescriptor d{};
        d.op = ProxyOp::atomic;
        d.amo = ProxyAmo::add;
        d.word = ProxyWord::u64;
        d.flags = kProxyFenced;
        d.pe = pe;
        d.remote_offset = ctx.heap_offset(arrivals);
        d.value = 1;
        proxy_push(ctx, d, what);
        continue;
      }
      platform::atomic_fetch_add(translate(ctx, arrivals, pe, what), std::uint64_t{1}, Sem::release,
                                 Scope::system);
    }
    spin_until(ctx, arrivals, Cmp::ge, n * static_cast<std::uint64_t>(ctx.n_pes), Sem::acquire,
               what);
  }
  g.sync();
}

}  // namespace detail

template <class G>
TESSERA_DEVICE void barrier(G g, const Context& ctx) {
  quiet(g, ctx);
  detail::barrier_impl(g, ctx, "barrier");
}

template <class G>
TESSERA_DEVICE void sync(G g, const Context& ctx) {
  detail::barrier_impl(g, ctx, "sync");
}

}  // namespace tessera::device
