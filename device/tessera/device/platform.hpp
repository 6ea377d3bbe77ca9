// The one place where toolchains differ: execution-space macros, scoped atomics and fences,
// clocks and spin hints. Everything else in Tessera's device side is written once against
// these names. The host branch (g++/clang++) is the host backend; the CUDA and HIP branches
// slot in beside it.
#pragma once

#include <cstddef>
#include <cstdint>

#include "tessera/device/order.hpp"

#if defined(__CUDACC__) || defined(__HIPCC__)
#error "GPU branches of platform.hpp are not written yet (see issue: CUDA and HIP backends)"
#else
#include <atomic>
#include <chrono>
#include <thread>
#define TESSERA_HOST_DEVICE
#define TESSERA_DEVICE
#define TESSERA_DEVICE_COMPILE 0
#define TESSERA_INLINE inline
#endif

namespace tessera::device::platform {

#if !TESSERA_DEVICE_COMPILE
// On the host backend every scope is implemented at system scope: PEs are processes sharing
// memory, and std::atomic_ref on lock-free types is address-free, so it orders across them.
constexpr std::memory_order to_std(Sem sem) {
  switch (sem) {
    case Sem::relaxed:
      return std::memory_order_relaxed;
    case Sem::acquire:
      return std::memory_order_acquire;
    case Sem::release:
      return std::memory_order_release;
    case Sem::acq_rel:
      return std::memory_order_acq_rel;
  }
  return std::memory_order_seq_cst;
}

// A load may not carry release semantics; acquire is the strongest it can have.
constexpr std::memory_order load_order(Sem sem) {
  return (sem == Sem::acquire || sem == Sem::acq_rel) ? std::memory_order_acquire
                                                      : std::memory_order_relaxed;
}

// A store may not carry acquire semantics; release is the strongest it can have.
constexpr std::memory_order store_order(Sem sem) {
  return (sem == Sem::release || sem == Sem::acq_rel) ? std::memory_order_release
                                                      : std::memory_order_relaxed;
}

template <class T>
inline T atomic_load(const T* p, Sem sem, Scope) {
  return std::atomic_ref<T>(*const_cast<T*>(p)).load(load_order(sem));
}

template <class T>
inline void atomic_store(T* p, T v, Sem sem, Scope) {
  std::atomic_ref<T>(*p).store(v, store_order(sem));
}

template <class T>
inline T atomic_fetch_add(T* p, T v, Sem sem, Scope) {
  return std::atomic_ref<T>(*p).fetch_add(v, to_std(sem));
}

template <class T>
inline T atomic_fetch_and(T* p, T v, Sem sem, Scope) {
  return std::atomic_ref<T>(*p).fetch_and(v, to_std(sem));
}

template <class T>
inline T atomic_fetch_or(T* p, T v, Sem sem, Scope) {
  return std::atomic_ref<T>(*p).fetch_or(v, to_std(sem));
}

template <class T>
inline T atomic_fetch_xor(T* p, T v, Sem sem, Scope) {
  return std::atomic_ref<T>(*p).fetch_xor(v, to_std(sem));
}

template <class T>
inline T atomic_exchange(T* p, T v, Sem sem, Scope) {
  return std::atomic_ref<T>(*p).exchange(v, to_std(sem));
}

// Returns the value seen; the swap happened iff it equals `expected`.
template <class T>
inline T atomic_compare_exchange(T* p, T expected, T desired, Sem sem, Scope) {
  std::atomic_ref<T>(*p).compare_exchange_strong(expected, desired, to_std(sem), load_order(sem));
  return expected;
}

template <class T>
inline T atomic_fetch_min(T* p, T v, Sem sem, Scope) {
  std::atomic_ref<T> ref(*p);
  T seen = ref.load(std::memory_order_relaxed);
  while (v < seen && !ref.compare_exchange_weak(seen, v, to_std(sem), load_order(sem))) {
  }
  return seen;
}

template <class T>
inline T atomic_fetch_max(T* p, T v, Sem sem, Scope) {
  std::atomic_ref<T> ref(*p);
  T seen = ref.load(std::memory_order_relaxed);
  while (v > seen && !ref.compare_exchange_weak(seen, v, to_std(sem), load_order(sem))) {
  }
  return seen;
}

// A fence of the given semantics; relaxed is a no-op.
inline void fence(Sem sem, Scope) {
  if (sem != Sem::relaxed) std::atomic_thread_fence(to_std(sem));
}

// Monotonic nanoseconds, for bounded waits.
inline std::uint64_t clock_ns() {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                        std::chrono::steady_clock::now().time_since_epoch())
                                        .count());
}

// Called on every turn of a spin-wait. `spins` counts turns so far. PEs x blocks outnumber
// cores on the host backend, so after a short burst of pure spinning the waiter yields its
// core; pure spinning would cost a scheduler slice (milliseconds) per hand-off.
inline void spin_pause(std::uint32_t spins) {
  if (spins < 64) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  } else {
    std::this_thread::yield();
  }
}
#endif  // !TESSERA_DEVICE_COMPILE

}  // namespace tessera::device::platform
