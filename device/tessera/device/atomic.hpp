// Remote atomics on 32- and 64-bit integers (and float/double add) in the symmetric heap: `dst` is
// a local heap address naming the word at the same offset on `pe`. Called by one thread each. Every
// call is one indivisible access to that word, ordered for the caller's other accesses by `sem` and
// promised to the threads of `scope`; cross-PE use needs Scope::system (the default; checked
// mode reports a narrower scope on a remote PE).
#pragma once

#include <concepts>
#include <cstdint>

#include "tessera/device/context.hpp"
#include "tessera/device/impl/check.hpp"
#include "tessera/device/order.hpp"

namespace tessera::device {

// The integer types remote atomics work on.
template <class T>
concept AtomicWord = std::same_as<T, std::int32_t> || std::same_as<T, std::uint32_t> ||
    std::same_as<T, std::int64_t> || std::same_as<T, std::uint64_t>;

// The types atomic_add and atomic_fetch_add take: the integer words, float and double. Float
// adds are native where the target has them (CUDA sm_60+; HIP emits a compare-and-swap loop on
// fine-grained memory unless built with -munsafe-fp-atomics), a compare-and-swap loop on the
// host backend; a peer reached through the network proxy takes integer atomics only.
template <class T>
concept AtomicAddend = AtomicWord<T> || std::same_as<T, float> || std::same_as<T, double>;

// Reads the word on `pe`; with acquire, the caller then sees what the writer released.
template <AtomicWord T>
TESSERA_KERNEL_CODE T atomic_load(const Context& ctx, const T* dst, int pe, Sem sem = Sem::acquire,
                                  Scope scope = Scope::system);

// Writes `value` to the word on `pe`; with release, a PE that acquires it sees the caller's
// earlier writes.
template <AtomicWord T>
TESSERA_KERNEL_CODE void atomic_store(const Context& ctx, T* dst, detail::identity_t<T> value,
                                      int pe, Sem sem = Sem::release, Scope scope = Scope::system);

// Adds `value` on `pe` and returns the previous value (float/double: rounded as one IEEE add).
template <AtomicAddend T>
TESSERA_KERNEL_CODE T atomic_fetch_add(const Context& ctx, T* dst, detail::identity_t<T> value,
                                       int pe, Sem sem = Sem::acq_rel, Scope scope = Scope::system);

// Adds `value` on `pe` (no result returned, so GPUs can issue it as a reduction).
template <AtomicAddend T>
TESSERA_KERNEL_CODE void atomic_add(const Context& ctx, T* dst, detail::identity_t<T> value, int pe,
                                    Sem sem = Sem::acq_rel, Scope scope = Scope::system);

// Replaces the word on `pe` with `value` and returns the previous value.
template <AtomicWord T>
TESSERA_KERNEL_CODE T atomic_exchange(const Context& ctx, T* dst, detail::identity_t<T> value,
                                      int pe, Sem sem = Sem::acq_rel, Scope scope = Scope::system);

// Stores `desired` on `pe` if the word equals `expected`; returns the value seen (the swap
// happened iff it equals `expected`).
template <AtomicWord T>
TESSERA_KERNEL_CODE T atomic_compare_exchange(const Context& ctx, T* dst,
                                              detail::identity_t<T> expected,
                                              detail::identity_t<T> desired, int pe,
                                              Sem sem = Sem::acq_rel, Scope scope = Scope::system);

// Bitwise and/or/xor `value` into the word on `pe`; return the previous value.
template <AtomicWord T>
TESSERA_KERNEL_CODE T atomic_fetch_and(const Context& ctx, T* dst, detail::identity_t<T> value,
                                       int pe, Sem sem = Sem::acq_rel, Scope scope = Scope::system);
template <AtomicWord T>
TESSERA_KERNEL_CODE T atomic_fetch_or(const Context& ctx, T* dst, detail::identity_t<T> value,
                                      int pe, Sem sem = Sem::acq_rel, Scope scope = Scope::system);
template <AtomicWord T>
TESSERA_KERNEL_CODE T atomic_fetch_xor(const Context& ctx, T* dst, detail::identity_t<T> value,
                                       int pe, Sem sem = Sem::acq_rel, Scope scope = Scope::system);

// Stores min/max(word, value) on `pe` (signed or unsigned as T); returns the previous value.
template <AtomicWord T>
TESSERA_KERNEL_CODE T atomic_fetch_min(const Context& ctx, T* dst, detail::identity_t<T> value,
                                       int pe, Sem sem = Sem::acq_rel, Scope scope = Scope::system);
template <AtomicWord T>
TESSERA_KERNEL_CODE T atomic_fetch_max(const Context& ctx, T* dst, detail::identity_t<T> value,
                                       int pe, Sem sem = Sem::acq_rel, Scope scope = Scope::system);

}  // namespace tessera::device

#include "tessera/device/impl/atomic_funcs.hpp"
