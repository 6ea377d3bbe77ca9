// Bodies of signal.hpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

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

// Waits until *sig CMP value and returns the value that satisfied it; `writer` (or -1) is named
// in the timeout diagnostic.
TESSERA_HOST_DEVICE inline std::uint64_t spin_until(const Context& ctx, const std::uint64_t* sig,
                                                    Cmp cmp, std::uint64_t value, Sem sem,
                                                    const char* what, int writer = -1) {
  std::uint64_t seen = 0;
  bounded_wait(
      watch_of(ctx), what,
      [&] {
        seen = platform::atomic_load(sig, sem, Scope::system);
        return compare(cmp, seen, value);
      },
      [&] {
        report_wait_timeout(ctx, what, sig, cmp, value,
                            platform::atomic_load(sig, sem, Scope::system), writer);
      });
  return seen;
}

// The value the group's first thread holds, in every thread of `g`; doubles as the group's sync
// (what the first thread wrote before it is visible to every thread after it).
template <class G>
TESSERA_HOST_DEVICE std::uint64_t broadcast_from_first(G g, std::uint64_t v) {
  if constexpr (std::is_same_v<G, Thread>) {
    return v;
  } else if constexpr (std::is_same_v<G, Warp>) {
    return platform::warp_broadcast(v);
  } else {
    static_assert(std::is_same_v<G, Block>, "the first argument is a group: Thread, Warp or Block");
    return platform::block_broadcast(v);
  }
}

// Where the status-masked calls stand: every status nonzero (nothing left to wait for).
TESSERA_HOST_DEVICE inline bool all_masked(const int* status, std::size_t n) {
  if (status == nullptr) return false;
  for (std::size_t i = 0; i < n; ++i)
    if (status[i] == 0) return false;
  return true;
}

// One sweep of test_any: the lowest unmasked i whose signal satisfies CMP value (its status set
// to 1), or npos.
TESSERA_HOST_DEVICE inline std::size_t sweep_any(const std::uint64_t* sigs, std::size_t n,
                                                 int* status, Cmp cmp, std::uint64_t value,
                                                 Sem sem) {
  for (std::size_t i = 0; i < n; ++i) {
    if (status != nullptr && status[i] != 0) continue;
    if (compare(cmp, platform::atomic_load(&sigs[i], sem, Scope::system), value)) {
      if (status != nullptr) status[i] = 1;
      return i;
    }
  }
  return npos;
}

// One sweep of test_some: every unmasked i whose signal satisfies CMP value goes to `indices`
// and gets status 1; returns how many.
TESSERA_HOST_DEVICE inline std::size_t sweep_some(const std::uint64_t* sigs, std::size_t n,
                                                  int* status, std::size_t* indices, Cmp cmp,
                                                  std::uint64_t value, Sem sem) {
  std::size_t found = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (status[i] != 0) continue;
    if (compare(cmp, platform::atomic_load(&sigs[i], sem, Scope::system), value)) {
      status[i] = 1;
      indices[found++] = i;
    }
  }
  return found;
}

// Reports a null status or indices array of the status-masked calls (always checked: cheap, and
// skipping it would be a wild write).
TESSERA_HOST_DEVICE inline void check_status_arrays(const Context& ctx, const int* status,
                                                    const std::size_t* indices, bool need_indices,
                                                    std::size_t n, const char* what) {
  if (n == 0 || (status != nullptr && (!need_indices || indices != nullptr))) return;
  Message m;
  m << what << " on PE " << ctx.my_pe << ": " << (status == nullptr ? "status" : "indices")
    << " is null; it must point to " << static_cast<std::uint64_t>(n) << " local "
    << (status == nullptr ? "ints (0: still awaited)" : "size_t slots");
  platform::report_failure(FailureCode::invalid_argument, m.c_str());
}

// The diagnostic of a wait on several signals that ran out of time: none of the awaited ones
// qualified. Without a status mask: "none of n signals from <first> reached (...); saw v0 v1
// ..."; with one (`masked`), the count of the unmasked signals and each one's index: "none of k
// awaited signals (of n) ...; saw [i]=v ...". `index` and `seen` hold the first `shown` awaited
// signals (" ..." follows when awaited > shown). Shared with the host's reading of a failure
// record (a Triton wait_until_some's timeout).
TESSERA_COLD TESSERA_HOST_DEVICE inline void describe_some_timeout(
    Message& m, const Context& ctx, const char* what, const std::uint64_t* first, std::uint64_t n,
    std::uint64_t awaited, bool masked, Cmp cmp, std::uint64_t value, const std::uint64_t* index,
    const std::uint64_t* seen, std::size_t shown) {
  m << what << " on PE " << ctx.my_pe << " timed out after "
    << static_cast<std::uint64_t>(ctx.timeout_ns / 1000000) << " ms: none of " << awaited;
  if (masked) {
    m << " awaited signals (of " << n << ") from ";
  } else {
    m << " signals from ";
  }
  describe_signal(m, ctx, first);
  m << " reached (value " << to_string(cmp) << " " << value << "); saw";
  for (std::size_t j = 0; j < shown; ++j) {
    m << " ";
    if (masked) m << "[" << index[j] << "]=";
    m << seen[j];
  }
  if (awaited > shown) m << " ...";
}

// Reports such a timeout of the C++ waits (up to 8 values shown), after marking the job as
// aborting.
TESSERA_NORETURN TESSERA_COLD TESSERA_HOST_DEVICE inline void report_some_timeout(
    const Context& ctx, const char* what, const std::uint64_t* sigs, std::size_t n,
    const int* status, Cmp cmp, std::uint64_t value) {
  broadcast_abort(ctx);
  constexpr std::size_t kShown = 8;
  std::uint64_t index[kShown] = {};
  std::uint64_t seen[kShown] = {};
  std::size_t awaited = 0;
  std::size_t shown = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (status != nullptr && status[i] != 0) continue;
    ++awaited;
    if (shown < kShown) {
      index[shown] = i;
      seen[shown] = platform::atomic_load(&sigs[i], Sem::relaxed, Scope::system);
      ++shown;
    }
  }
  Message m;
  describe_some_timeout(m, ctx, what, sigs, n, awaited, status != nullptr, cmp, value, index, seen,
                        shown);
  platform::report_failure(FailureCode::timeout, m.c_str());
}

// The waiting sweep of wait_until_any, run by one thread: returns the index (npos when every
// status is nonzero).
TESSERA_HOST_DEVICE inline std::size_t spin_until_any(const Context& ctx, const std::uint64_t* sigs,
                                                      std::size_t n, int* status, Cmp cmp,
                                                      std::uint64_t value, Sem sem,
                                                      const char* what) {
  if (all_masked(status, n)) return npos;
  SpinPacer pacer(ctx, what);
  for (std::uint32_t spins = 0;; ++spins) {
    const std::size_t i = sweep_any(sigs, n, status, cmp, value, sem);
    if (i != npos) return i;
    if (pacer.pause_and_check(spins)) report_some_timeout(ctx, what, sigs, n, status, cmp, value);
  }
}

// The waiting sweep of wait_until_some, run by one thread.
TESSERA_HOST_DEVICE inline std::size_t spin_until_some(const Context& ctx,
                                                       const std::uint64_t* sigs, std::size_t n,
                                                       int* status, std::size_t* indices, Cmp cmp,
                                                       std::uint64_t value, Sem sem) {
  if (n == 0 || all_masked(status, n)) return 0;
  SpinPacer pacer(ctx, "wait_until_some");
  for (std::uint32_t spins = 0;; ++spins) {
    const std::size_t found = sweep_some(sigs, n, status, indices, cmp, value, sem);
    if (found != 0) return found;
    if (pacer.pause_and_check(spins))
      report_some_timeout(ctx, "wait_until_some", sigs, n, status, cmp, value);
  }
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

// put_signal and put_signal_nbi. `wait` matters for the proxy alone: a mapped peer's copy is done
// by the issuing threads, so both forms return with `src` reusable.
template <class G, class T>
TESSERA_KERNEL_CODE void put_signal_impl(G g, const Context& ctx, Tile<T> dst, Tile<const T> src,
                                         std::uint64_t* sig, std::uint64_t value, SignalOp op,
                                         int pe, bool wait) {
  check_in_heap(ctx, sig, sizeof(std::uint64_t), "put_signal", "signal");
  if (use_proxy(ctx, pe, "put_signal")) {
    proxy_put_signal(g, ctx, dst, src, sig, value, op, pe, wait);
    return;
  }
  rma_impl<ProxyOp::put>(g, ctx, dst, src, pe, "put_signal");
  // Every thread's part of the tile is written before the one release store below.
  g.sync();
  if (g.rank() == 0) signal(ctx, sig, value, op, pe, Sem::release, Scope::system);
}

}  // namespace detail

template <class G, class T>
TESSERA_KERNEL_CODE void put_signal(G g, const Context& ctx, Tile<T> dst,
                                    detail::identity_t<Tile<const T>> src, std::uint64_t* sig,
                                    std::uint64_t value, SignalOp op, int pe) {
  detail::put_signal_impl(g, ctx, dst, src, sig, value, op, pe, true);
}

template <class G, class T>
TESSERA_KERNEL_CODE void put_signal_nbi(G g, const Context& ctx, Tile<T> dst,
                                        detail::identity_t<Tile<const T>> src, std::uint64_t* sig,
                                        std::uint64_t value, SignalOp op, int pe) {
  detail::put_signal_impl(g, ctx, dst, src, sig, value, op, pe, false);
}

template <class G, class T>
TESSERA_KERNEL_CODE void put_signal(G g, const Context& ctx, T* dst,
                                    detail::identity_t<const T*> src, std::size_t count,
                                    std::uint64_t* sig, std::uint64_t value, SignalOp op, int pe) {
  put_signal(g, ctx, make_tile(dst, count), make_tile(src, count), sig, value, op, pe);
}

template <class G, class T>
TESSERA_KERNEL_CODE void put_signal_nbi(G g, const Context& ctx, T* dst,
                                        detail::identity_t<const T*> src, std::size_t count,
                                        std::uint64_t* sig, std::uint64_t value, SignalOp op,
                                        int pe) {
  put_signal_nbi(g, ctx, make_tile(dst, count), make_tile(src, count), sig, value, op, pe);
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
TESSERA_KERNEL_CODE std::uint64_t wait_until(G g, const Context& ctx, const std::uint64_t* sig,
                                             Cmp cmp, std::uint64_t value, Sem sem) {
  detail::check_in_heap(ctx, sig, sizeof(std::uint64_t), "wait_until", "signal");
  std::uint64_t seen = 0;
  if (g.rank() == 0) seen = detail::spin_until(ctx, sig, cmp, value, sem, "wait_until");
  return detail::broadcast_from_first(g, seen);
}

namespace detail {
// wait_until_any with or without a status mask, under the name `what`.
template <class G>
TESSERA_KERNEL_CODE std::size_t wait_any_impl(G g, const Context& ctx, const std::uint64_t* sigs,
                                              std::size_t n, int* status, Cmp cmp,
                                              std::uint64_t value, Sem sem, const char* what) {
  check_in_heap(ctx, sigs, n * sizeof(std::uint64_t), what, "signals");
  if (n == 0) {
    Message m;
    m << what << " on PE " << ctx.my_pe << ": no signals to wait for (n == 0)";
    platform::report_failure(FailureCode::invalid_argument, m.c_str());
  }
  std::uint64_t which = 0;
  if (g.rank() == 0) which = spin_until_any(ctx, sigs, n, status, cmp, value, sem, what);
  return static_cast<std::size_t>(broadcast_from_first(g, which));
}
}  // namespace detail

template <class G>
TESSERA_KERNEL_CODE std::size_t wait_until_any(G g, const Context& ctx, const std::uint64_t* sigs,
                                               std::size_t n, Cmp cmp, std::uint64_t value,
                                               Sem sem) {
  return detail::wait_any_impl(g, ctx, sigs, n, nullptr, cmp, value, sem, "wait_until_any");
}

template <class G>
TESSERA_KERNEL_CODE std::size_t wait_until_any(G g, const Context& ctx, const std::uint64_t* sigs,
                                               std::size_t n, int* status, Cmp cmp,
                                               std::uint64_t value, Sem sem) {
  detail::check_status_arrays(ctx, status, nullptr, false, n, "wait_until_any");
  return detail::wait_any_impl(g, ctx, sigs, n, status, cmp, value, sem, "wait_until_any");
}

TESSERA_KERNEL_CODE inline std::size_t wait_until_any(const Context& ctx, const std::uint64_t* sigs,
                                                      std::size_t n, Cmp cmp, std::uint64_t value,
                                                      Sem sem) {
  return detail::wait_any_impl(Thread{}, ctx, sigs, n, nullptr, cmp, value, sem, "wait_until_any");
}

template <class G>
TESSERA_KERNEL_CODE std::size_t wait_until_some(G g, const Context& ctx, const std::uint64_t* sigs,
                                                std::size_t n, int* status, std::size_t* indices,
                                                Cmp cmp, std::uint64_t value, Sem sem) {
  detail::check_status_arrays(ctx, status, indices, true, n, "wait_until_some");
  detail::check_in_heap(ctx, sigs, n * sizeof(std::uint64_t), "wait_until_some", "signals");
  std::uint64_t found = 0;
  if (g.rank() == 0)
    found = detail::spin_until_some(ctx, sigs, n, status, indices, cmp, value, sem);
  return static_cast<std::size_t>(detail::broadcast_from_first(g, found));
}

TESSERA_KERNEL_CODE inline bool test(const Context& ctx, const std::uint64_t* sig, Cmp cmp,
                                     std::uint64_t value, Sem sem) {
  detail::check_in_heap(ctx, sig, sizeof(std::uint64_t), "test", "signal");
  return compare(cmp, platform::atomic_load(sig, sem, Scope::system), value);
}

TESSERA_KERNEL_CODE inline std::size_t test_any(const Context& ctx, const std::uint64_t* sigs,
                                                std::size_t n, Cmp cmp, std::uint64_t value,
                                                Sem sem) {
  detail::check_in_heap(ctx, sigs, n * sizeof(std::uint64_t), "test_any", "signals");
  return detail::sweep_any(sigs, n, nullptr, cmp, value, sem);
}

TESSERA_KERNEL_CODE inline std::size_t test_any(const Context& ctx, const std::uint64_t* sigs,
                                                std::size_t n, int* status, Cmp cmp,
                                                std::uint64_t value, Sem sem) {
  detail::check_status_arrays(ctx, status, nullptr, false, n, "test_any");
  detail::check_in_heap(ctx, sigs, n * sizeof(std::uint64_t), "test_any", "signals");
  return detail::sweep_any(sigs, n, status, cmp, value, sem);
}

TESSERA_KERNEL_CODE inline std::size_t test_some(const Context& ctx, const std::uint64_t* sigs,
                                                 std::size_t n, int* status, std::size_t* indices,
                                                 Cmp cmp, std::uint64_t value, Sem sem) {
  detail::check_status_arrays(ctx, status, indices, true, n, "test_some");
  detail::check_in_heap(ctx, sigs, n * sizeof(std::uint64_t), "test_some", "signals");
  if (n == 0) return 0;
  return detail::sweep_some(sigs, n, status, indices, cmp, value, sem);
}

TESSERA_KERNEL_CODE inline bool test_all(const Context& ctx, const std::uint64_t* sigs,
                                         std::size_t n, Cmp cmp, std::uint64_t value, Sem sem) {
  detail::check_in_heap(ctx, sigs, n * sizeof(std::uint64_t), "test_all", "signals");
  for (std::size_t i = 0; i < n; ++i)
    if (!compare(cmp, platform::atomic_load(&sigs[i], sem, Scope::system), value)) return false;
  return true;
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

template <class G>
TESSERA_KERNEL_CODE inline std::uint64_t DeviceEpoch::next(G g, std::uint64_t n) const {
  // Every thread reads the count before any thread writes it; the second sync makes the new
  // count visible to the group's next call in this launch.
  const std::uint64_t value = platform::atomic_load(words, Sem::relaxed, Scope::device) + n;
  g.sync();
  if (g.rank() == 0) platform::atomic_store(words, value, Sem::relaxed, Scope::device);
  g.sync();
  return value;
}

TESSERA_KERNEL_CODE inline std::uint64_t DeviceEpoch::next_in_grid(Block blk,
                                                                   std::uint64_t n) const {
  const std::uint64_t value = platform::atomic_load(words, Sem::relaxed, Scope::device) + n;
  blk.sync();
  if (blk.rank() == 0) {
    // Each block has read the count before it arrives (release); the last block to arrive
    // (acquire: after every read) advances the count and clears the arrivals for the next
    // launch, which the stream starts after this one.
    const std::uint64_t arrived =
        platform::atomic_fetch_add(words + 1, std::uint64_t{1}, Sem::acq_rel, Scope::device) + 1;
    if (arrived == static_cast<std::uint64_t>(blk.grid_size())) {
      platform::atomic_store(words + 1, std::uint64_t{0}, Sem::relaxed, Scope::device);
      platform::atomic_store(words, value, Sem::relaxed, Scope::device);
    }
  }
  return value;
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
