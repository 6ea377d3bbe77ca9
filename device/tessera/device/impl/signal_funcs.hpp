// Bodies of signal.hpp.
#pragma once

#include <cstddef>
#include <cstdint>

#include "tessera/device/signal.hpp"

namespace tessera::device {
namespace detail {

// Describes a signal word for diagnostics: its heap offset and allocation, or that it lies
// outside the heap.
TESSERA_HOST_DEVICE inline void describe_signal(Message& m, const Context& ctx,
                                                const std::uint64_t* sig) {
  if (ctx.in_heap(sig, sizeof(std::uint64_t))) {
    const auto offset = static_cast<std::uint64_t>(ctx.heap_offset(sig));
    m << "signal at heap offset " << offset;
    describe_allocation(m, ctx, offset);
  } else {
    m << "signal at address " << hex(sig) << " (outside the heap)";
  }
}

// The diagnostic of a wait on `sig` that ran out of time; shared with the host's reading of a
// failure record (failure_record.hpp).
TESSERA_COLD TESSERA_HOST_DEVICE inline void describe_wait_timeout(Message& m, const Context& ctx,
                                                                   const char* what,
                                                                   const std::uint64_t* sig,
                                                                   Cmp cmp, std::uint64_t value,
                                                                   std::uint64_t seen, int writer) {
  m << what << " on PE " << ctx.my_pe << " timed out after "
    << static_cast<std::uint64_t>(ctx.timeout_ns / 1000000) << " ms: ";
  describe_signal(m, ctx, sig);
  m << " awaited (value " << to_string(cmp) << " " << value << "), saw " << seen;
  if (writer >= 0) m << "; PE " << writer << " was expected to write it";
}

// Reports a wait on `sig` that ran out of time, after marking the job as aborting (so peers stop
// waiting for this PE). `writer` is the PE expected to update the signal, or -1 when the
// operation does not know.
TESSERA_NORETURN TESSERA_COLD TESSERA_HOST_DEVICE inline void report_wait_timeout(
    const Context& ctx, const char* what, const std::uint64_t* sig, Cmp cmp, std::uint64_t value,
    std::uint64_t seen, int writer) {
  broadcast_abort(ctx);
  Message m;
  describe_wait_timeout(m, ctx, what, sig, cmp, value, seen, writer);
  platform::report_failure(FailureCode::timeout, m.c_str());
}

TESSERA_NORETURN TESSERA_HOST_DEVICE inline void report_wait_timeout(const Context& ctx,
                                                                     const char* what,
                                                                     const std::uint64_t* sig,
                                                                     Cmp cmp, std::uint64_t value,
                                                                     std::uint64_t seen) {
  report_wait_timeout(ctx, what, sig, cmp, value, seen, -1);
}

// Waits until *sig CMP value; `writer` (or -1) is named in the timeout diagnostic.
TESSERA_HOST_DEVICE inline void spin_until(const Context& ctx, const std::uint64_t* sig, Cmp cmp,
                                           std::uint64_t value, Sem sem, const char* what,
                                           int writer = -1) {
  bounded_wait(
      watch_of(ctx), what,
      [&] { return compare(cmp, platform::atomic_load(sig, sem, Scope::system), value); },
      [&] {
        report_wait_timeout(ctx, what, sig, cmp, value,
                            platform::atomic_load(sig, sem, Scope::system), writer);
      });
}

}  // namespace detail

namespace detail {

// put_signal through the network proxy. With `wait`, returns once `src` is reusable.
template <class G, class T>
TESSERA_KERNEL_CODE void proxy_put_signal(G g, const Context& ctx, Tile<T> dst, Tile<const T> src,
                                          std::uint64_t* sig, std::uint64_t value, SignalOp op,
                                          int pe, bool wait) {
  check_shapes(ctx, dst, src, "put_signal");
  check_in_heap(ctx, dst.data, dst.extent_bytes(), "put_signal", "destination tile");
  if (dst.is_contiguous() && src.is_contiguous() && !dst.empty()) {
    // One descriptor: the proxy writes the tile, waits for its delivery, then signals.
    if (g.rank() == 0) {
      const ProxyDescriptor d = encode_proxy_put_signal(
          pe, ctx.heap_offset(dst.data), reinterpret_cast<std::uintptr_t>(src.data),
          dst.size() * sizeof(T), ctx.heap_offset(sig), value, op);
      const std::uint64_t t = proxy_push(ctx, d, "put_signal");
      if (wait) proxy_wait_completed(ctx, t + 1, "put_signal");
    }
    g.sync();
    return;
  }
  // Rows, then a signal that the proxy starts only once every row is delivered.
  proxy_tile(g, ctx, ProxyOp::put, dst, src, pe, wait, "put_signal");
  g.sync();
  if (g.rank() == 0) signal(ctx, sig, value, op, pe, Sem::release, Scope::system);
}

}  // namespace detail

template <class G, class T>
TESSERA_KERNEL_CODE void put_signal(G g, const Context& ctx, Tile<T> dst,
                                    detail::identity_t<Tile<const T>> src, std::uint64_t* sig,
                                    std::uint64_t value, SignalOp op, int pe) {
  detail::check_in_heap(ctx, sig, sizeof(std::uint64_t), "put_signal", "signal");
  if (detail::use_proxy(ctx, pe, "put_signal")) {
    detail::proxy_put_signal(g, ctx, dst, src, sig, value, op, pe, true);
    return;
  }
  put_signal_nbi(g, ctx, dst, src, sig, value, op, pe);
}

template <class G, class T>
TESSERA_KERNEL_CODE void put_signal_nbi(G g, const Context& ctx, Tile<T> dst,
                                        detail::identity_t<Tile<const T>> src, std::uint64_t* sig,
                                        std::uint64_t value, SignalOp op, int pe) {
  detail::check_in_heap(ctx, sig, sizeof(std::uint64_t), "put_signal", "signal");
  if (detail::use_proxy(ctx, pe, "put_signal")) {
    detail::proxy_put_signal(g, ctx, dst, src, sig, value, op, pe, false);
    return;
  }
  detail::put_impl(g, ctx, dst, src, pe, "put_signal");
  // Every thread's part of the tile is written before the one release store below.
  g.sync();
  if (g.rank() == 0) signal(ctx, sig, value, op, pe, Sem::release, Scope::system);
}

TESSERA_KERNEL_CODE inline void signal(const Context& ctx, std::uint64_t* sig, std::uint64_t value,
                                       SignalOp op, int pe, Sem sem, Scope scope) {
  detail::check_scope(ctx, scope, pe, "signal");
  detail::check_in_heap(ctx, sig, sizeof(std::uint64_t), "signal", "signal");
  if (detail::use_proxy(ctx, pe, "signal")) {
    detail::proxy_push(ctx,
                       encode_proxy_signal(pe, ctx.heap_offset(sig), value, op,
                                           sem == Sem::release || sem == Sem::acq_rel),
                       "signal");
    return;
  }
  std::uint64_t* remote = detail::translate(ctx, sig, pe, "signal");
  if (op == SignalOp::set) {
    platform::atomic_store(remote, value, sem, scope);
  } else {
    platform::atomic_fetch_add(remote, value, sem, scope);
  }
}

template <class G>
TESSERA_KERNEL_CODE void wait_until(G g, const Context& ctx, const std::uint64_t* sig, Cmp cmp,
                                    std::uint64_t value, Sem sem) {
  detail::check_in_heap(ctx, sig, sizeof(std::uint64_t), "wait_until", "signal");
  if (g.rank() == 0) detail::spin_until(ctx, sig, cmp, value, sem, "wait_until");
  g.sync();
}

TESSERA_KERNEL_CODE inline std::size_t wait_until_any(const Context& ctx, const std::uint64_t* sigs,
                                                      std::size_t n, Cmp cmp, std::uint64_t value,
                                                      Sem sem) {
  detail::check_in_heap(ctx, sigs, n * sizeof(std::uint64_t), "wait_until_any", "signals");
  if (n == 0) {
    detail::Message m;
    m << "wait_until_any on PE " << ctx.my_pe << ": no signals to wait for (n == 0)";
    platform::report_failure(FailureCode::invalid_argument, m.c_str());
  }
  detail::SpinPacer pacer(ctx, "wait_until_any");
  for (std::uint32_t spins = 0;; ++spins) {
    for (std::size_t i = 0; i < n; ++i) {
      if (compare(cmp, platform::atomic_load(&sigs[i], sem, Scope::system), value)) return i;
    }
    if (pacer.pause_and_check(spins)) {
      detail::broadcast_abort(ctx);
      detail::Message m;
      m << "wait_until_any on PE " << ctx.my_pe << " timed out after "
        << static_cast<std::uint64_t>(ctx.timeout_ns / 1000000) << " ms: none of "
        << static_cast<std::uint64_t>(n) << " signals from ";
      detail::describe_signal(m, ctx, sigs);
      m << " reached (value " << to_string(cmp) << " " << value << "); saw";
      for (std::size_t i = 0; i < n && i < 8; ++i)
        m << " " << platform::atomic_load(&sigs[i], Sem::relaxed, Scope::system);
      if (n > 8) m << " ...";
      platform::report_failure(FailureCode::timeout, m.c_str());
    }
  }
}

template <class G>
TESSERA_KERNEL_CODE void wait_until_all(G g, const Context& ctx, const std::uint64_t* sigs,
                                        std::size_t n, Cmp cmp, std::uint64_t value, Sem sem) {
  detail::check_in_heap(ctx, sigs, n * sizeof(std::uint64_t), "wait_until_all", "signals");
  for (auto i = static_cast<std::size_t>(g.rank()); i < n; i += static_cast<std::size_t>(g.size()))
    detail::spin_until(ctx, &sigs[i], cmp, value, sem, "wait_until_all");
  g.sync();
}

TESSERA_KERNEL_CODE inline std::uint64_t signal_fetch(const std::uint64_t* sig, Sem sem) {
  return platform::atomic_load(sig, sem, Scope::system);
}

namespace detail {

// wait_until for an operation that knows which PE updates `sig` (a ring neighbour, the owner of
// a chunk): a timeout names `writer` as well. `what` names the operation.
template <class G>
TESSERA_KERNEL_CODE void wait_from(G g, const Context& ctx, const std::uint64_t* sig, Cmp cmp,
                                   std::uint64_t value, int writer, const char* what,
                                   Sem sem = Sem::acquire) {
  check_in_heap(ctx, sig, sizeof(std::uint64_t), what, "signal");
  if (g.rank() == 0) spin_until(ctx, sig, cmp, value, sem, what, writer);
  g.sync();
}

// wait_until_all where sigs[i] is written by PE i (one slot per PE).
template <class G>
TESSERA_KERNEL_CODE void wait_all_from_owners(G g, const Context& ctx, const std::uint64_t* sigs,
                                              std::size_t n, Cmp cmp, std::uint64_t value,
                                              const char* what, Sem sem = Sem::acquire) {
  check_in_heap(ctx, sigs, n * sizeof(std::uint64_t), what, "signals");
  for (auto i = static_cast<std::size_t>(g.rank()); i < n; i += static_cast<std::size_t>(g.size()))
    spin_until(ctx, &sigs[i], cmp, value, sem, what, static_cast<int>(i));
  g.sync();
}

}  // namespace detail

}  // namespace tessera::device
