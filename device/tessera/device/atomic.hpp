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

// The atomics of one operand, one row each: X(name, Word, Result, default Sem, kind), each
// declared as a template on T constrained by the concept Word:
//   Result name(const Context& ctx, T* dst, identity_t<T> value, int pe,
//               Sem sem = Sem::DEFAULT, Scope scope = Scope::system);
// where DEFAULT is the row's default Sem.
// `kind` is the operation as the network proxy's wire names it (ProxyAmo); a void Result asks
// for nothing back, so the proxy need not wait for a reply and a GPU may issue a reduction.
//   atomic_store      writes `value` to the word on `pe`; with release, a PE that acquires it
//                     sees the caller's earlier writes.
//   atomic_fetch_add  adds `value` on `pe` and returns the previous value (float/double: rounded
//                     as one IEEE add).
//   atomic_add        adds `value` on `pe` (no result returned, so GPUs can issue it as a
//                     reduction).
//   atomic_exchange   replaces the word on `pe` with `value` and returns the previous value.
//   atomic_fetch_and, atomic_fetch_or, atomic_fetch_xor: bitwise and/or/xor `value` into the word
//                     on `pe`; return the previous value.
//   atomic_fetch_min, atomic_fetch_max: store min/max(word, value) on `pe` (signed or unsigned as
//                     T); return the previous value.
#define TESSERA_DEVICE_OPERAND_ATOMICS(X)              \
  X(atomic_store, AtomicWord, void, release, store)    \
  X(atomic_fetch_add, AtomicAddend, T, acq_rel, add)   \
  X(atomic_add, AtomicAddend, void, acq_rel, add)      \
  X(atomic_exchange, AtomicWord, T, acq_rel, exchange) \
  X(atomic_fetch_and, AtomicWord, T, acq_rel, and_)    \
  X(atomic_fetch_or, AtomicWord, T, acq_rel, or_)      \
  X(atomic_fetch_xor, AtomicWord, T, acq_rel, xor_)    \
  X(atomic_fetch_min, AtomicWord, T, acq_rel, min)     \
  X(atomic_fetch_max, AtomicWord, T, acq_rel, max)

#define TESSERA_DEVICE_DECLARE_OPERAND_ATOMIC(name, Word, Result, default_sem, kind)               \
  template <Word T>                                                                                \
  TESSERA_KERNEL_CODE Result name(const Context& ctx, T* dst, detail::identity_t<T> value, int pe, \
                                  Sem sem = Sem::default_sem, Scope scope = Scope::system);
TESSERA_DEVICE_OPERAND_ATOMICS(TESSERA_DEVICE_DECLARE_OPERAND_ATOMIC)
#undef TESSERA_DEVICE_DECLARE_OPERAND_ATOMIC

// Stores `desired` on `pe` if the word equals `expected`; returns the value seen (the swap
// happened iff it equals `expected`).
template <AtomicWord T>
TESSERA_KERNEL_CODE T atomic_compare_exchange(const Context& ctx, T* dst,
                                              detail::identity_t<T> expected,
                                              detail::identity_t<T> desired, int pe,
                                              Sem sem = Sem::acq_rel, Scope scope = Scope::system);

}  // namespace tessera::device

#include "tessera/device/impl/atomic_funcs.hpp"
