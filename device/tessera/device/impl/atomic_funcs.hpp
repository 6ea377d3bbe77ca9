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

}  // namespace detail

template <AtomicWord T>
TESSERA_KERNEL_CODE T atomic_load(const Context& ctx, const T* dst, int pe, Sem sem, Scope scope) {
  if (detail::use_proxy(ctx, pe, "atomic_load")) {
    detail::check_scope(ctx, scope, pe, "atomic_load");
    detail::check_in_heap(ctx, dst, sizeof(T), "atomic_load", "atomic word");
    return detail::proxy_atomic<T>(ctx, ProxyOp::fetch_atomic, ProxyAmo::load, dst, T{}, T{}, pe,
                                   sem, "atomic_load");
  }
  return platform::atomic_load(detail::atomic_target(ctx, dst, pe, scope, "atomic_load"), sem,
                               scope);
}

template <AtomicWord T>
TESSERA_KERNEL_CODE void atomic_store(const Context& ctx, T* dst, detail::identity_t<T> value,
                                      int pe, Sem sem, Scope scope) {
  if (detail::use_proxy(ctx, pe, "atomic_store")) {
    detail::check_scope(ctx, scope, pe, "atomic_store");
    detail::check_in_heap(ctx, dst, sizeof(T), "atomic_store", "atomic word");
    detail::proxy_atomic<T>(ctx, ProxyOp::atomic, ProxyAmo::store, dst, value, T{}, pe, sem,
                            "atomic_store");
    return;
  }
  platform::atomic_store(detail::atomic_target(ctx, dst, pe, scope, "atomic_store"), value, sem,
                         scope);
}

template <AtomicAddend T>
TESSERA_KERNEL_CODE void atomic_add(const Context& ctx, T* dst, detail::identity_t<T> value, int pe,
                                    Sem sem, Scope scope) {
  if (detail::use_proxy(ctx, pe, "atomic_add")) {
    if constexpr (std::is_floating_point_v<T>) {
      detail::report_proxy_float_add(ctx, pe, sizeof(T), "atomic_add");
    } else {
      detail::check_scope(ctx, scope, pe, "atomic_add");
      detail::check_in_heap(ctx, dst, sizeof(T), "atomic_add", "atomic word");
      detail::proxy_atomic<T>(ctx, ProxyOp::atomic, ProxyAmo::add, dst, value, T{}, pe, sem,
                              "atomic_add");
    }
    return;
  }
  platform::atomic_fetch_add(detail::atomic_target(ctx, dst, pe, scope, "atomic_add"), value, sem,
                             scope);
}

template <AtomicWord T>
TESSERA_KERNEL_CODE T atomic_compare_exchange(const Context& ctx, T* dst,
                                              detail::identity_t<T> expected,
                                              detail::identity_t<T> desired, int pe, Sem sem,
                                              Scope scope) {
  if (detail::use_proxy(ctx, pe, "atomic_compare_exchange")) {
    detail::check_scope(ctx, scope, pe, "atomic_compare_exchange");
    detail::check_in_heap(ctx, dst, sizeof(T), "atomic_compare_exchange", "atomic word");
    return detail::proxy_atomic<T>(ctx, ProxyOp::compare_atomic, ProxyAmo::exchange, dst, desired,
                                   expected, pe, sem, "atomic_compare_exchange");
  }
  return platform::atomic_compare_exchange(
      detail::atomic_target(ctx, dst, pe, scope, "atomic_compare_exchange"), expected, desired, sem,
      scope);
}

template <AtomicAddend T>
TESSERA_KERNEL_CODE T atomic_fetch_add(const Context& ctx, T* dst, detail::identity_t<T> value,
                                       int pe, Sem sem, Scope scope) {
  if (detail::use_proxy(ctx, pe, "atomic_fetch_add")) {
    if constexpr (std::is_floating_point_v<T>) {
      detail::report_proxy_float_add(ctx, pe, sizeof(T), "atomic_fetch_add");
      return T{};
    } else {
      detail::check_scope(ctx, scope, pe, "atomic_fetch_add");
      detail::check_in_heap(ctx, dst, sizeof(T), "atomic_fetch_add", "atomic word");
      return detail::proxy_atomic<T>(ctx, ProxyOp::fetch_atomic, ProxyAmo::add, dst, value, T{}, pe,
                                     sem, "atomic_fetch_add");
    }
  }
  return platform::atomic_fetch_add(detail::atomic_target(ctx, dst, pe, scope, "atomic_fetch_add"),
                                    value, sem, scope);
}

template <AtomicWord T>
TESSERA_KERNEL_CODE T atomic_exchange(const Context& ctx, T* dst, detail::identity_t<T> value,
                                      int pe, Sem sem, Scope scope) {
  if (detail::use_proxy(ctx, pe, "atomic_exchange")) {
    detail::check_scope(ctx, scope, pe, "atomic_exchange");
    detail::check_in_heap(ctx, dst, sizeof(T), "atomic_exchange", "atomic word");
    return detail::proxy_atomic<T>(ctx, ProxyOp::fetch_atomic, ProxyAmo::exchange, dst, value, T{},
                                   pe, sem, "atomic_exchange");
  }
  return platform::atomic_exchange(detail::atomic_target(ctx, dst, pe, scope, "atomic_exchange"),
                                   value, sem, scope);
}

template <AtomicWord T>
TESSERA_KERNEL_CODE T atomic_fetch_and(const Context& ctx, T* dst, detail::identity_t<T> value,
                                       int pe, Sem sem, Scope scope) {
  if (detail::use_proxy(ctx, pe, "atomic_fetch_and")) {
    detail::check_scope(ctx, scope, pe, "atomic_fetch_and");
    detail::check_in_heap(ctx, dst, sizeof(T), "atomic_fetch_and", "atomic word");
    return detail::proxy_atomic<T>(ctx, ProxyOp::fetch_atomic, ProxyAmo::and_, dst, value, T{}, pe,
                                   sem, "atomic_fetch_and");
  }
  return platform::atomic_fetch_and(detail::atomic_target(ctx, dst, pe, scope, "atomic_fetch_and"),
                                    value, sem, scope);
}

template <AtomicWord T>
TESSERA_KERNEL_CODE T atomic_fetch_or(const Context& ctx, T* dst, detail::identity_t<T> value,
                                      int pe, Sem sem, Scope scope) {
  if (detail::use_proxy(ctx, pe, "atomic_fetch_or")) {
    detail::check_scope(ctx, scope, pe, "atomic_fetch_or");
    detail::check_in_heap(ctx, dst, sizeof(T), "atomic_fetch_or", "atomic word");
    return detail::proxy_atomic<T>(ctx, ProxyOp::fetch_atomic, ProxyAmo::or_, dst, value, T{}, pe,
                                   sem, "atomic_fetch_or");
  }
  return platform::atomic_fetch_or(detail::atomic_target(ctx, dst, pe, scope, "atomic_fetch_or"),
                                   value, sem, scope);
}

template <AtomicWord T>
TESSERA_KERNEL_CODE T atomic_fetch_xor(const Context& ctx, T* dst, detail::identity_t<T> value,
                                       int pe, Sem sem, Scope scope) {
  if (detail::use_proxy(ctx, pe, "atomic_fetch_xor")) {
    detail::check_scope(ctx, scope, pe, "atomic_fetch_xor");
    detail::check_in_heap(ctx, dst, sizeof(T), "atomic_fetch_xor", "atomic word");
    return detail::proxy_atomic<T>(ctx, ProxyOp::fetch_atomic, ProxyAmo::xor_, dst, value, T{}, pe,
                                   sem, "atomic_fetch_xor");
  }
  return platform::atomic_fetch_xor(detail::atomic_target(ctx, dst, pe, scope, "atomic_fetch_xor"),
                                    value, sem, scope);
}

template <AtomicWord T>
TESSERA_KERNEL_CODE T atomic_fetch_min(const Context& ctx, T* dst, detail::identity_t<T> value,
                                       int pe, Sem sem, Scope scope) {
  if (detail::use_proxy(ctx, pe, "atomic_fetch_min")) {
    detail::check_scope(ctx, scope, pe, "atomic_fetch_min");
    detail::check_in_heap(ctx, dst, sizeof(T), "atomic_fetch_min", "atomic word");
    return detail::proxy_atomic<T>(ctx, ProxyOp::fetch_atomic, ProxyAmo::min, dst, value, T{}, pe,
                                   sem, "atomic_fetch_min");
  }
  return platform::atomic_fetch_min(detail::atomic_target(ctx, dst, pe, scope, "atomic_fetch_min"),
                                    value, sem, scope);
}

template <AtomicWord T>
TESSERA_KERNEL_CODE T atomic_fetch_max(const Context& ctx, T* dst, detail::identity_t<T> value,
                                       int pe, Sem sem, Scope scope) {
  if (detail::use_proxy(ctx, pe, "atomic_fetch_max")) {
    detail::check_scope(ctx, scope, pe, "atomic_fetch_max");
    detail::check_in_heap(ctx, dst, sizeof(T), "atomic_fetch_max", "atomic word");
    return detail::proxy_atomic<T>(ctx, ProxyOp::fetch_atomic, ProxyAmo::max, dst, value, T{}, pe,
                                   sem, "atomic_fetch_max");
  }
  return platform::atomic_fetch_max(detail::atomic_target(ctx, dst, pe, scope, "atomic_fetch_max"),
                                    value, sem, scope);
}

}  // namespace tessera::device
