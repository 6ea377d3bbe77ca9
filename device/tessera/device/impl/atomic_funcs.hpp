// Bodies of atomic.hpp.
#pragma once

#include <cstddef>
#include <type_traits>

#include "tessera/device/atomic.hpp"

namespace tessera::device {
namespace detail {

// Checks the call and returns the word's address on `pe`.
template <class T>
TESSERA_KERNEL_CODE T* atomic_target(const Context& ctx, T* dst, int pe, Scope scope,
                                     const char* what) {
  check_scope(ctx, scope, pe, what);
  check_in_heap(ctx, dst, sizeof(T), what, "atomic word");
  return translate(ctx, dst, pe, what);
}

// Refuses a float/double add to a peer reached through the network proxy (whose wire format
// carries integer words only) before anything is queued.
TESSERA_COLD TESSERA_HOST_DEVICE inline void report_proxy_float_add(const Context& ctx, int pe,
                                                                    std::size_t bytes,
                                                                    const char* what) {
  Message m;
  m << what << " on PE " << ctx.my_pe << ": PE " << pe
    << " is reached through the network proxy, which carries integer atomics only; a "
    << (bytes == 4 ? "float" : "double") << " add needs a peer whose heap is mapped here";
  platform::report_failure(FailureCode::invalid_argument, m.c_str());
}

// The platform's atomic of ProxyOp kOp and kind kAmo on the word `w` the checks returned, one
// row per kind. The forms with no result (ProxyOp::atomic: atomic_store, atomic_add) drop the
// platform's, so GPUs can issue the add as a reduction.
template <ProxyOp kOp, ProxyAmo kAmo, class P, class T>
TESSERA_KERNEL_CODE T platform_atomic(P* w, T v, T compare, Sem sem, Scope scope) {
  using A = ProxyAmo;
  if constexpr (kOp == ProxyOp::compare_atomic) {
    return platform::atomic_compare_exchange(w, compare, v, sem, scope);
  } else if constexpr (kOp == ProxyOp::atomic) {
    static_assert(kAmo == A::store || kAmo == A::add, "the atomics without a result: store, add");
    if constexpr (kAmo == A::store) platform::atomic_store(w, v, sem, scope);
    if constexpr (kAmo == A::add) platform::atomic_fetch_add(w, v, sem, scope);
    return T{};
  } else {
    static_assert(kOp == ProxyOp::fetch_atomic && kAmo != A::store, "a fetching atomic");
    if constexpr (kAmo == A::load) return platform::atomic_load(w, sem, scope);
    if constexpr (kAmo == A::add) return platform::atomic_fetch_add(w, v, sem, scope);
    if constexpr (kAmo == A::exchange) return platform::atomic_exchange(w, v, sem, scope);
    if constexpr (kAmo == A::and_) return platform::atomic_fetch_and(w, v, sem, scope);
    if constexpr (kAmo == A::or_) return platform::atomic_fetch_or(w, v, sem, scope);
    if constexpr (kAmo == A::xor_) return platform::atomic_fetch_xor(w, v, sem, scope);
    if constexpr (kAmo == A::min) return platform::atomic_fetch_min(w, v, sem, scope);
    if constexpr (kAmo == A::max) return platform::atomic_fetch_max(w, v, sem, scope);
  }
}

// Every remote atomic: ProxyOp kOp (atomic: no result; fetch_atomic: the previous value back;
// compare_atomic: compare-exchange, `compare` the expected value) of kind kAmo on the word at
// dst's offset on `pe`. Checks the call, then queues it to the network proxy or issues it on the
// mapped word; `what` names the public call in diagnostics. P is T, or const T for a load.
template <ProxyOp kOp, ProxyAmo kAmo, class P, class T>
TESSERA_KERNEL_CODE T word_atomic(const Context& ctx, P* dst, T value, T compare, int pe, Sem sem,
                                  Scope scope, const char* what) {
  static_assert(std::is_same_v<std::remove_const_t<P>, T>, "the word's type is the operand's");
  if (use_proxy(ctx, pe, what)) {
    if constexpr (std::is_floating_point_v<T>) {
      report_proxy_float_add(ctx, pe, sizeof(T), what);
      return T{};
    } else {
      check_scope(ctx, scope, pe, what);
      check_in_heap(ctx, dst, sizeof(T), what, "atomic word");
      return proxy_atomic<T>(ctx, kOp, kAmo, dst, value, compare, pe, sem, what);
    }
  }
  return platform_atomic<kOp, kAmo>(atomic_target(ctx, dst, pe, scope, what), value, compare, sem,
                                    scope);
}

}  // namespace detail

template <AtomicWord T>
TESSERA_KERNEL_CODE T atomic_load(const Context& ctx, const T* dst, int pe, Sem sem, Scope scope) {
  return detail::word_atomic<ProxyOp::fetch_atomic, ProxyAmo::load>(ctx, dst, T{}, T{}, pe, sem,
                                                                    scope, "atomic_load");
}

// atomic.hpp's table of one-operand atomics; each returns what word_atomic returns, or nothing.
#define TESSERA_DEVICE_DEFINE_OPERAND_ATOMIC(name, Word, Result, default_sem, kind)                \
  template <Word T>                                                                                \
  TESSERA_KERNEL_CODE Result name(const Context& ctx, T* dst, detail::identity_t<T> value, int pe, \
                                  Sem sem, Scope scope) {                                          \
    constexpr ProxyOp kOp = std::is_void_v<Result> ? ProxyOp::atomic : ProxyOp::fetch_atomic;      \
    return static_cast<Result>(                                                                    \
        detail::word_atomic<kOp, ProxyAmo::kind>(ctx, dst, value, T{}, pe, sem, scope, #name));    \
  }
TESSERA_DEVICE_OPERAND_ATOMICS(TESSERA_DEVICE_DEFINE_OPERAND_ATOMIC)
#undef TESSERA_DEVICE_DEFINE_OPERAND_ATOMIC

template <AtomicWord T>
TESSERA_KERNEL_CODE T atomic_compare_exchange(const Context& ctx, T* dst,
                                              detail::identity_t<T> expected,
                                              detail::identity_t<T> desired, int pe, Sem sem,
                                              Scope scope) {
  return detail::word_atomic<ProxyOp::compare_atomic, ProxyAmo::exchange>(
      ctx, dst, desired, expected, pe, sem, scope, "atomic_compare_exchange");
}

}  // namespace tessera::device
