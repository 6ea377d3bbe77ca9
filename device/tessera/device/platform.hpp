// The one place where toolchains differ: execution-space macros, scoped atomics and fences,
// thread ids, clocks and spin hints. Everything else in Tessera's device side is written once
// against these names.
//
// Three branches, chosen per compiler pass:
//   host  g++/clang++, and the host pass of nvcc/hipcc: std::atomic_ref, one thread per block.
//         This is the host backend, so it is also what a .cu file's host code runs when its
//         kernel is launched on a host-backend stream.
//   CUDA  nvcc's device pass (__CUDA_ARCH__): cuda::atomic_ref with thread scopes.
//   HIP   hipcc's device pass (__HIP_DEVICE_COMPILE__): __hip_atomic_* with memory scopes.
// Under nvcc and hipcc every device-API function is __host__ __device__ (TESSERA_DEVICE too),
// because the host backend's launcher calls kernels from host code even in a .cu file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#if defined(__CUDACC__)
#include <cuda/atomic>

#include <cstdio>
#define TESSERA_HOST_DEVICE __host__ __device__
#define TESSERA_DEVICE __host__ __device__
#if defined(__CUDA_ARCH__)
#define TESSERA_DEVICE_COMPILE 1
#else
#define TESSERA_DEVICE_COMPILE 0
#endif
#elif defined(__HIPCC__) || defined(__HIP__)
#include <hip/hip_runtime.h>

#include <cstdio>
#define TESSERA_HOST_DEVICE __host__ __device__
#define TESSERA_DEVICE __host__ __device__
#if defined(__HIP_DEVICE_COMPILE__)
#define TESSERA_DEVICE_COMPILE 1
#else
#define TESSERA_DEVICE_COMPILE 0
#endif
#else
#define TESSERA_HOST_DEVICE
#define TESSERA_DEVICE
#define TESSERA_DEVICE_COMPILE 0
#endif
#define TESSERA_INLINE inline

// [[noreturn]] for functions that end the calling device code (report_failure and the
// reporters built on it), except in hipcc's device pass: there a call to a noreturn function is
// followed by `unreachable`, and LLVM 15's AMDGPU backend cannot structure an `unreachable`
// inside lane-divergent control flow (`if (g.rank() == 0)` of a Warp or Block) and stops with
// "failed to annotate CFG". The HIP report_failure still never returns: it traps.
#if defined(__HIP_DEVICE_COMPILE__)
#define TESSERA_NORETURN
#else
#define TESSERA_NORETURN [[noreturn]]
#endif

// Marks the builders of failure diagnostics, which run at most once per kernel: on GPUs they
// stay out of line, so the dozens of checks a kernel inlines do not each inline a message.
#if defined(__CUDACC__) || defined(__HIPCC__) || defined(__HIP__)
#define TESSERA_COLD __attribute__((noinline, cold))
#else
#define TESSERA_COLD
#endif

// No-alias hint for pointer parameters of hot loops (every supported compiler spells it so).
#define TESSERA_RESTRICT __restrict__

// Keeps GCC's loop vectorizer (on at -O3) off a function: register-blocked GEMM micro-kernels
// are left to the basic-block (SLP) vectorizer, which keeps the accumulators in registers
// instead of vectorizing the k loop as many reductions that spill. Host code only.
#if defined(__GNUC__) && !defined(__clang__) && !TESSERA_DEVICE_COMPILE
#define TESSERA_NO_LOOP_VECTORIZE __attribute__((optimize("O2")))
#else
#define TESSERA_NO_LOOP_VECTORIZE
#endif

#if !TESSERA_DEVICE_COMPILE
#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>
#endif

// The vocabulary the functions below take. Both headers use the macros above, so they are
// included only once those exist (each includes this header part-way down for the same reason).
#include "tessera/device/failure.hpp"
#include "tessera/device/order.hpp"

namespace tessera::device::platform {

#if !TESSERA_DEVICE_COMPILE
// On the host backend every scope is implemented at system scope: PEs are processes sharing
// memory, and std::atomic_ref on lock-free types is address-free, so it orders across them.
TESSERA_HOST_DEVICE constexpr std::memory_order to_std(Sem sem) {
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
TESSERA_HOST_DEVICE constexpr std::memory_order load_order(Sem sem) {
  return (sem == Sem::acquire || sem == Sem::acq_rel) ? std::memory_order_acquire
                                                      : std::memory_order_relaxed;
}

// A store may not carry acquire semantics; release is the strongest it can have.
TESSERA_HOST_DEVICE constexpr std::memory_order store_order(Sem sem) {
  return (sem == Sem::release || sem == Sem::acq_rel) ? std::memory_order_release
                                                      : std::memory_order_relaxed;
}

template <class T>
TESSERA_HOST_DEVICE inline T atomic_load(const T* p, Sem sem, Scope) {
  return std::atomic_ref<T>(*const_cast<T*>(p)).load(load_order(sem));
}

template <class T>
TESSERA_HOST_DEVICE inline void atomic_store(T* p, T v, Sem sem, Scope) {
  std::atomic_ref<T>(*p).store(v, store_order(sem));
}

template <class T>
TESSERA_HOST_DEVICE inline T atomic_fetch_add(T* p, T v, Sem sem, Scope) {
  return std::atomic_ref<T>(*p).fetch_add(v, to_std(sem));
}

template <class T>
TESSERA_HOST_DEVICE inline T atomic_fetch_and(T* p, T v, Sem sem, Scope) {
  return std::atomic_ref<T>(*p).fetch_and(v, to_std(sem));
}

template <class T>
TESSERA_HOST_DEVICE inline T atomic_fetch_or(T* p, T v, Sem sem, Scope) {
  return std::atomic_ref<T>(*p).fetch_or(v, to_std(sem));
}

template <class T>
TESSERA_HOST_DEVICE inline T atomic_fetch_xor(T* p, T v, Sem sem, Scope) {
  return std::atomic_ref<T>(*p).fetch_xor(v, to_std(sem));
}

template <class T>
TESSERA_HOST_DEVICE inline T atomic_exchange(T* p, T v, Sem sem, Scope) {
  return std::atomic_ref<T>(*p).exchange(v, to_std(sem));
}

// Returns the value seen; the swap happened iff it equals `expected`.
template <class T>
TESSERA_HOST_DEVICE inline T atomic_compare_exchange(T* p, T expected, T desired, Sem sem, Scope) {
  std::atomic_ref<T>(*p).compare_exchange_strong(expected, desired, to_std(sem), load_order(sem));
  return expected;
}

template <class T>
TESSERA_HOST_DEVICE inline T atomic_fetch_min(T* p, T v, Sem sem, Scope) {
  std::atomic_ref<T> ref(*p);
  T seen = ref.load(std::memory_order_relaxed);
  while (v < seen && !ref.compare_exchange_weak(seen, v, to_std(sem), load_order(sem))) {
  }
  return seen;
}

template <class T>
TESSERA_HOST_DEVICE inline T atomic_fetch_max(T* p, T v, Sem sem, Scope) {
  std::atomic_ref<T> ref(*p);
  T seen = ref.load(std::memory_order_relaxed);
  while (v > seen && !ref.compare_exchange_weak(seen, v, to_std(sem), load_order(sem))) {
  }
  return seen;
}

// A fence of the given semantics; relaxed is a no-op.
TESSERA_HOST_DEVICE inline void fence(Sem sem, Scope) {
  if (sem != Sem::relaxed) std::atomic_thread_fence(to_std(sem));
}

// Monotonic nanoseconds, for bounded waits.
TESSERA_HOST_DEVICE inline std::uint64_t clock_ns() {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                        std::chrono::steady_clock::now().time_since_epoch())
                                        .count());
}

// Called on every turn of a spin-wait. `spins` counts turns so far. PEs x blocks outnumber
// cores on the host backend, so after a short burst of pure spinning the waiter yields its
// core; pure spinning would cost a scheduler slice (milliseconds) per hand-off.
TESSERA_HOST_DEVICE inline void spin_pause(std::uint32_t spins) {
  if (spins < 64) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  } else {
    std::this_thread::yield();
  }
}

// --- failures ---

// Ends the calling device code with a diagnostic. Host: throws Failure, which the launcher
// turns into tessera::Error at Stream::synchronize (or which propagates to a host caller).
[[noreturn]] TESSERA_HOST_DEVICE inline void report_failure(FailureCode code, const char* message) {
  throw Failure(code, message);
}

// --- execution: the host backend runs one thread per block, so a warp has one lane ---

TESSERA_HOST_DEVICE inline constexpr int warp_size() { return 1; }
TESSERA_HOST_DEVICE inline int lane_id() { return 0; }
TESSERA_HOST_DEVICE inline int block_threads() { return 1; }
TESSERA_HOST_DEVICE inline int thread_in_block() { return 0; }
TESSERA_HOST_DEVICE inline void warp_sync() {}
TESSERA_HOST_DEVICE inline void block_sync() {}

// --- bulk copies (the caller splits work among a group's threads) ---

// Copies `bytes` between non-overlapping ranges with the widest accesses the target offers.
// Host: memcpy, which vectorises and, for large copies, ends its non-temporal stores with a
// store fence, so a later release store orders after every byte.
TESSERA_HOST_DEVICE inline void copy_bytes(void* dst, const void* src, std::size_t bytes) {
  if (bytes != 0) std::memcpy(dst, src, bytes);
}

// Copies one element of 1, 2, 4 or 8 bytes as a single relaxed atomic access, so that a flag
// written by a one-element put can be polled with an atomic load without a data race.
template <std::size_t kBytes>
TESSERA_HOST_DEVICE inline void copy_word_relaxed(void* dst, const void* src) {
  using Word = std::conditional_t<
      kBytes == 1, std::uint8_t,
      std::conditional_t<kBytes == 2, std::uint16_t,
                         std::conditional_t<kBytes == 4, std::uint32_t, std::uint64_t>>>;
  static_assert(sizeof(Word) == kBytes, "copy_word_relaxed takes 1, 2, 4 or 8 bytes");
  Word w;
  std::memcpy(&w, src, kBytes);
  std::atomic_ref<Word>(*static_cast<Word*>(dst)).store(w, std::memory_order_relaxed);
}

#else  // TESSERA_DEVICE_COMPILE: a GPU's device pass

namespace detail {

// The word copy_word_relaxed moves for an element of kBytes bytes.
template <std::size_t kBytes>
using word_t = std::conditional_t<
    kBytes == 1, std::uint8_t,
    std::conditional_t<kBytes == 2, std::uint16_t,
                       std::conditional_t<kBytes == 4, std::uint32_t, std::uint64_t>>>;

// copy_bytes' unit: 16 bytes, one 128-bit load and store when aligned.
struct alignas(16) Vec16 {
  std::uint64_t lo, hi;
};

// Copies `bytes` with accesses of type Word; dst and src are equally misaligned for Word, so
// after a byte-wise head both are Word-aligned; a byte-wise tail finishes the ragged end.
template <class Word>
TESSERA_DEVICE inline void copy_bytes_as(unsigned char* d, const unsigned char* s,
                                         std::size_t bytes) {
  std::size_t head =
      (sizeof(Word) - reinterpret_cast<std::uintptr_t>(d) % sizeof(Word)) % sizeof(Word);
  if (head > bytes) head = bytes;
  for (std::size_t i = 0; i < head; ++i) d[i] = s[i];
  d += head;
  s += head;
  bytes -= head;
  auto* dw = reinterpret_cast<Word*>(d);
  const auto* sw = reinterpret_cast<const Word*>(s);
  const std::size_t words = bytes / sizeof(Word);
#pragma unroll 4
  for (std::size_t i = 0; i < words; ++i) dw[i] = sw[i];
  for (std::size_t i = words * sizeof(Word); i < bytes; ++i) d[i] = s[i];
}

}  // namespace detail

#if defined(__CUDA_ARCH__)
// ---------------------------------------------------------------------------------- CUDA ---

namespace detail {

TESSERA_DEVICE constexpr cuda::std::memory_order cuda_order(Sem sem) {
  switch (sem) {
    case Sem::relaxed:
      return cuda::std::memory_order_relaxed;
    case Sem::acquire:
      return cuda::std::memory_order_acquire;
    case Sem::release:
      return cuda::std::memory_order_release;
    case Sem::acq_rel:
      return cuda::std::memory_order_acq_rel;
  }
  return cuda::std::memory_order_seq_cst;
}

TESSERA_DEVICE constexpr cuda::std::memory_order cuda_load_order(Sem sem) {
  return (sem == Sem::acquire || sem == Sem::acq_rel) ? cuda::std::memory_order_acquire
                                                      : cuda::std::memory_order_relaxed;
}

TESSERA_DEVICE constexpr cuda::std::memory_order cuda_store_order(Sem sem) {
  return (sem == Sem::release || sem == Sem::acq_rel) ? cuda::std::memory_order_release
                                                      : cuda::std::memory_order_relaxed;
}

// Calls op(ref) with a cuda::atomic_ref on *p of the thread scope matching `scope`.
template <class T, class Op>
TESSERA_DEVICE inline T with_scope(T* p, Scope scope, Op op) {
  switch (scope) {
    case Scope::block:
      return op(cuda::atomic_ref<T, cuda::thread_scope_block>(*p));
    case Scope::device:
      return op(cuda::atomic_ref<T, cuda::thread_scope_device>(*p));
    case Scope::system:
      break;
  }
  return op(cuda::atomic_ref<T, cuda::thread_scope_system>(*p));
}

}  // namespace detail

template <class T>
TESSERA_DEVICE inline T atomic_load(const T* p, Sem sem, Scope scope) {
  return detail::with_scope(const_cast<T*>(p), scope,
                            [=](auto ref) { return ref.load(detail::cuda_load_order(sem)); });
}

template <class T>
TESSERA_DEVICE inline void atomic_store(T* p, T v, Sem sem, Scope scope) {
  detail::with_scope(p, scope, [=](auto ref) {
    ref.store(v, detail::cuda_store_order(sem));
    return T{};
  });
}

template <class T>
TESSERA_DEVICE inline T atomic_fetch_add(T* p, T v, Sem sem, Scope scope) {
  return detail::with_scope(p, scope,
                            [=](auto ref) { return ref.fetch_add(v, detail::cuda_order(sem)); });
}

template <class T>
TESSERA_DEVICE inline T atomic_fetch_and(T* p, T v, Sem sem, Scope scope) {
  return detail::with_scope(p, scope,
                            [=](auto ref) { return ref.fetch_and(v, detail::cuda_order(sem)); });
}

template <class T>
TESSERA_DEVICE inline T atomic_fetch_or(T* p, T v, Sem sem, Scope scope) {
  return detail::with_scope(p, scope,
                            [=](auto ref) { return ref.fetch_or(v, detail::cuda_order(sem)); });
}

template <class T>
TESSERA_DEVICE inline T atomic_fetch_xor(T* p, T v, Sem sem, Scope scope) {
  return detail::with_scope(p, scope,
                            [=](auto ref) { return ref.fetch_xor(v, detail::cuda_order(sem)); });
}

template <class T>
TESSERA_DEVICE inline T atomic_exchange(T* p, T v, Sem sem, Scope scope) {
  return detail::with_scope(p, scope,
                            [=](auto ref) { return ref.exchange(v, detail::cuda_order(sem)); });
}

// Returns the value seen; the swap happened iff it equals `expected`.
template <class T>
TESSERA_DEVICE inline T atomic_compare_exchange(T* p, T expected, T desired, Sem sem, Scope scope) {
  return detail::with_scope(p, scope, [=](auto ref) {
    T seen = expected;
    ref.compare_exchange_strong(seen, desired, detail::cuda_order(sem),
                                detail::cuda_load_order(sem));
    return seen;
  });
}

template <class T>
TESSERA_DEVICE inline T atomic_fetch_min(T* p, T v, Sem sem, Scope scope) {
  return detail::with_scope(p, scope,
                            [=](auto ref) { return ref.fetch_min(v, detail::cuda_order(sem)); });
}

template <class T>
TESSERA_DEVICE inline T atomic_fetch_max(T* p, T v, Sem sem, Scope scope) {
  return detail::with_scope(p, scope,
                            [=](auto ref) { return ref.fetch_max(v, detail::cuda_order(sem)); });
}

// A fence of the given semantics at `scope` (fence.acq_rel.cta/gpu/sys); relaxed is a no-op.
TESSERA_DEVICE inline void fence(Sem sem, Scope scope) {
  if (sem == Sem::relaxed) return;
  const cuda::thread_scope s = scope == Scope::block    ? cuda::thread_scope_block
                               : scope == Scope::device ? cuda::thread_scope_device
                                                        : cuda::thread_scope_system;
  cuda::atomic_thread_fence(detail::cuda_order(sem), s);
}

// Nanoseconds of the GPU's global timer (%globaltimer), for bounded waits.
TESSERA_DEVICE inline std::uint64_t clock_ns() {
  std::uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// A spin-wait turn: free for the first turns, then __nanosleep doubling from 32 ns to 1 us so
// waiting warps leave issue slots (and memory bandwidth) to the ones doing work.
TESSERA_DEVICE inline void spin_pause(std::uint32_t spins) {
  if (spins < 8) return;
  const std::uint32_t step = spins / 64 < 5 ? spins / 64 : 5;
  __nanosleep(32u << step);
}

// Prints the diagnostic (the CUDA printf buffer reaches the host's stdout at the next
// synchronisation) and traps: the kernel ends, and Stream::synchronize reports a device fault.
[[noreturn]] TESSERA_DEVICE inline void report_failure(FailureCode code, const char* message) {
  printf("tessera: device failure (block %u thread %u, code %u): %s\n", blockIdx.x, threadIdx.x,
         static_cast<unsigned>(code), message);
  __trap();
  __builtin_unreachable();
}

TESSERA_DEVICE inline constexpr int warp_size() { return 32; }
TESSERA_DEVICE inline int lane_id() {
  unsigned lane;
  asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
  return static_cast<int>(lane);
}
TESSERA_DEVICE inline int block_threads() { return static_cast<int>(blockDim.x); }
TESSERA_DEVICE inline int thread_in_block() { return static_cast<int>(threadIdx.x); }
TESSERA_DEVICE inline void warp_sync() { __syncwarp(); }
TESSERA_DEVICE inline void block_sync() { __syncthreads(); }

// Copies one element of 1, 2, 4 or 8 bytes as a single relaxed atomic store at system scope.
template <std::size_t kBytes>
TESSERA_DEVICE inline void copy_word_relaxed(void* dst, const void* src) {
  using Word = detail::word_t<kBytes>;
  static_assert(sizeof(Word) == kBytes, "copy_word_relaxed takes 1, 2, 4 or 8 bytes");
  Word w;
  __builtin_memcpy(&w, src, kBytes);
  cuda::atomic_ref<Word, cuda::thread_scope_system>(*static_cast<Word*>(dst))
      .store(w, cuda::std::memory_order_relaxed);
}

#else
// ----------------------------------------------------------------------------------- HIP ---

namespace detail {

TESSERA_DEVICE constexpr int hip_order(Sem sem) {
  switch (sem) {
    case Sem::relaxed:
      return __ATOMIC_RELAXED;
    case Sem::acquire:
      return __ATOMIC_ACQUIRE;
    case Sem::release:
      return __ATOMIC_RELEASE;
    case Sem::acq_rel:
      return __ATOMIC_ACQ_REL;
  }
  return __ATOMIC_SEQ_CST;
}

TESSERA_DEVICE constexpr int hip_load_order(Sem sem) {
  return (sem == Sem::acquire || sem == Sem::acq_rel) ? __ATOMIC_ACQUIRE : __ATOMIC_RELAXED;
}

TESSERA_DEVICE constexpr int hip_store_order(Sem sem) {
  return (sem == Sem::release || sem == Sem::acq_rel) ? __ATOMIC_RELEASE : __ATOMIC_RELAXED;
}

// The builtins take their memory scope as a constant: one call per scope.
#define TESSERA_HIP_SCOPED(call_with_scope)                 \
  switch (scope) {                                          \
    case Scope::block:                                      \
      return call_with_scope(__HIP_MEMORY_SCOPE_WORKGROUP); \
    case Scope::device:                                     \
      return call_with_scope(__HIP_MEMORY_SCOPE_AGENT);     \
    case Scope::system:                                     \
      break;                                                \
  }                                                         \
  return call_with_scope(__HIP_MEMORY_SCOPE_SYSTEM)

// A fence of `order` (a literal __ATOMIC_* constant, as the builtin wants) at `scope`.
#define TESSERA_HIP_FENCE(order)                  \
  switch (scope) {                                \
    case Scope::block:                            \
      __builtin_amdgcn_fence(order, "workgroup"); \
      return;                                     \
    case Scope::device:                           \
      __builtin_amdgcn_fence(order, "agent");     \
      return;                                     \
    case Scope::system:                           \
      break;                                      \
  }                                               \
  __builtin_amdgcn_fence(order, "");              \
  return

}  // namespace detail

template <class T>
TESSERA_DEVICE inline T atomic_load(const T* p, Sem sem, Scope scope) {
  const int order = detail::hip_load_order(sem);
#define TESSERA_HIP_CALL(s) __hip_atomic_load(p, order, s)
  TESSERA_HIP_SCOPED(TESSERA_HIP_CALL);
#undef TESSERA_HIP_CALL
}

template <class T>
TESSERA_DEVICE inline void atomic_store(T* p, T v, Sem sem, Scope scope) {
  const int order = detail::hip_store_order(sem);
#define TESSERA_HIP_CALL(s) __hip_atomic_store(p, v, order, s)
  TESSERA_HIP_SCOPED(TESSERA_HIP_CALL);
#undef TESSERA_HIP_CALL
}

#define TESSERA_HIP_RMW(name, builtin)                             \
  template <class T>                                               \
  TESSERA_DEVICE inline T name(T* p, T v, Sem sem, Scope scope) {  \
    const int order = detail::hip_order(sem);                      \
    switch (scope) {                                               \
      case Scope::block:                                           \
        return builtin(p, v, order, __HIP_MEMORY_SCOPE_WORKGROUP); \
      case Scope::device:                                          \
        return builtin(p, v, order, __HIP_MEMORY_SCOPE_AGENT);     \
      case Scope::system:                                          \
        break;                                                     \
    }                                                              \
    return builtin(p, v, order, __HIP_MEMORY_SCOPE_SYSTEM);        \
  }
TESSERA_HIP_RMW(atomic_fetch_add, __hip_atomic_fetch_add)
TESSERA_HIP_RMW(atomic_fetch_and, __hip_atomic_fetch_and)
TESSERA_HIP_RMW(atomic_fetch_or, __hip_atomic_fetch_or)
TESSERA_HIP_RMW(atomic_fetch_xor, __hip_atomic_fetch_xor)
TESSERA_HIP_RMW(atomic_exchange, __hip_atomic_exchange)
TESSERA_HIP_RMW(atomic_fetch_min, __hip_atomic_fetch_min)
TESSERA_HIP_RMW(atomic_fetch_max, __hip_atomic_fetch_max)
#undef TESSERA_HIP_RMW

// Returns the value seen; the swap happened iff it equals `expected`.
template <class T>
TESSERA_DEVICE inline T atomic_compare_exchange(T* p, T expected, T desired, Sem sem, Scope scope) {
  const int order = detail::hip_order(sem), failure = detail::hip_load_order(sem);
#define TESSERA_HIP_CALL(s) \
  (__hip_atomic_compare_exchange_strong(p, &expected, desired, order, failure, s), expected)
  TESSERA_HIP_SCOPED(TESSERA_HIP_CALL);
#undef TESSERA_HIP_CALL
}

#undef TESSERA_HIP_SCOPED

// A fence of the given semantics at `scope`; relaxed is a no-op.
TESSERA_DEVICE inline void fence(Sem sem, Scope scope) {
  if (sem == Sem::acquire) {
    TESSERA_HIP_FENCE(__ATOMIC_ACQUIRE);
  } else if (sem == Sem::release) {
    TESSERA_HIP_FENCE(__ATOMIC_RELEASE);
  } else if (sem == Sem::acq_rel) {
    TESSERA_HIP_FENCE(__ATOMIC_ACQ_REL);
  }
}
#undef TESSERA_HIP_FENCE

// Nanoseconds of the constant-rate wall clock (s_memrealtime), which runs at 100 MHz on
// gfx90a (MI200) and gfx94x (MI300).
TESSERA_DEVICE inline std::uint64_t clock_ns() { return wall_clock64() * 10; }

// A spin-wait turn: free for the first turns, then s_sleep (64 clocks per unit), longer as the
// wait goes on, so waiting wavefronts leave issue slots to the ones doing work.
TESSERA_DEVICE inline void spin_pause(std::uint32_t spins) {
  if (spins < 8) return;
  if (spins < 256) {
    __builtin_amdgcn_s_sleep(1);
  } else {
    __builtin_amdgcn_s_sleep(16);
  }
}

// Prints the diagnostic and traps: the kernel ends and the host sees a device fault. Not
// [[noreturn]] to the compiler (see TESSERA_NORETURN): the trap is `s_trap 2` in inline asm, what
// __builtin_trap lowers to under the HSA trap handler, because __builtin_trap would let LLVM
// infer noreturn and put back the divergent `unreachable` after every call. Out of line, so the
// printf is not inlined into every check.
__attribute__((noinline)) TESSERA_DEVICE inline void report_failure(FailureCode code,
                                                                    const char* message) {
  printf("tessera: device failure (block %u thread %u, code %u): %s\n",
         static_cast<unsigned>(blockIdx.x), static_cast<unsigned>(threadIdx.x),
         static_cast<unsigned>(code), message);
  asm volatile("s_trap 2" ::: "memory");
}

TESSERA_DEVICE inline int warp_size() { return warpSize; }  // 64 on gfx9 (CDNA)
TESSERA_DEVICE inline int lane_id() {
  return static_cast<int>(__builtin_amdgcn_mbcnt_hi(~0u, __builtin_amdgcn_mbcnt_lo(~0u, 0u)));
}
TESSERA_DEVICE inline int block_threads() { return static_cast<int>(blockDim.x); }
TESSERA_DEVICE inline int thread_in_block() { return static_cast<int>(threadIdx.x); }
// Lanes of a wavefront run in step; the fences make each lane's writes visible to the others.
TESSERA_DEVICE inline void warp_sync() {
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "wavefront");
  __builtin_amdgcn_wave_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "wavefront");
}
TESSERA_DEVICE inline void block_sync() { __syncthreads(); }

// Copies one element of 1, 2, 4 or 8 bytes as a single relaxed atomic store at system scope.
template <std::size_t kBytes>
TESSERA_DEVICE inline void copy_word_relaxed(void* dst, const void* src) {
  using Word = detail::word_t<kBytes>;
  static_assert(sizeof(Word) == kBytes, "copy_word_relaxed takes 1, 2, 4 or 8 bytes");
  Word w;
  __builtin_memcpy(&w, src, kBytes);
  __hip_atomic_store(static_cast<Word*>(dst), w, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_SYSTEM);
}

#endif  // __CUDA_ARCH__

// Copies `bytes` between non-overlapping ranges, by the calling thread alone (the caller has
// split the work among the group's threads): 16-byte accesses when dst and src are equally
// misaligned modulo 16, else the widest width they share, with byte-wise ragged edges. Out of
// line: a call costs little next to the copy, and keeps kernels with many puts small.
__attribute__((noinline)) TESSERA_DEVICE inline void copy_bytes(void* dst, const void* src,
                                                                std::size_t bytes) {
  auto* d = static_cast<unsigned char*>(dst);
  const auto* s = static_cast<const unsigned char*>(src);
  const auto skew = reinterpret_cast<std::uintptr_t>(d) ^ reinterpret_cast<std::uintptr_t>(s);
  if (skew % 16 == 0) {
    detail::copy_bytes_as<detail::Vec16>(d, s, bytes);
  } else if (skew % 8 == 0) {
    detail::copy_bytes_as<std::uint64_t>(d, s, bytes);
  } else if (skew % 4 == 0) {
    detail::copy_bytes_as<std::uint32_t>(d, s, bytes);
  } else if (skew % 2 == 0) {
    detail::copy_bytes_as<std::uint16_t>(d, s, bytes);
  } else {
    detail::copy_bytes_as<std::uint8_t>(d, s, bytes);
  }
}

#endif  // !TESSERA_DEVICE_COMPILE

}  // namespace tessera::device::platform

// --- tensor-core MMA: warp-level 16 x 16 x 16 tiles, fp32 accumulation ---
//
// kHasTensorCoreMma says whether this compiler pass has them: CUDA's device pass for sm_80 and
// newer (nvcuda::wmma). Everywhere else (host, HIP, older GPUs) it is false and the functions are
// stand-ins that end the kernel with a failure, so portable code calls them only under
// `if constexpr (platform::kHasTensorCoreMma)`. All 32 lanes of a warp call each function
// together. Pointers given to mma_16x16x16 and mma_store are 32-byte aligned, in shared or
// global memory; leading dimensions (in elements) are multiples of 8 for the 16-bit inputs and
// of 4 for the fp32 result. block_shared<T>() is one T per block in shared memory, the staging
// area for those loads.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <mma.h>

namespace tessera::device::platform {

inline constexpr bool kHasTensorCoreMma = true;

// The input element type of an MMA: the bits of an IEEE half or a bfloat16.
enum class MmaInput { f16, bf16 };

// A warp's 16 x 16 fp32 accumulator tile, spread over its lanes' registers.
struct MmaAccumulator {
  nvcuda::wmma::fragment<nvcuda::wmma::accumulator, 16, 16, 16, float> frag;
};

TESSERA_DEVICE inline void mma_zero(MmaAccumulator& acc) {
  nvcuda::wmma::fill_fragment(acc.frag, 0.0f);
}

// acc += A * B, A and B 16 x 16 row-major (leading dimensions lda and ldb, in elements).
template <MmaInput kIn>
TESSERA_DEVICE inline void mma_16x16x16(MmaAccumulator& acc, const void* a, unsigned lda,
                                        const void* b, unsigned ldb) {
  using E = std::conditional_t<kIn == MmaInput::bf16, __nv_bfloat16, __half>;
  namespace wmma = nvcuda::wmma;
  wmma::fragment<wmma::matrix_a, 16, 16, 16, E, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, E, wmma::row_major> fb;
  wmma::load_matrix_sync(fa, static_cast<const E*>(a), lda);
  wmma::load_matrix_sync(fb, static_cast<const E*>(b), ldb);
  wmma::mma_sync(acc.frag, fa, fb, acc.frag);
}

// Writes the accumulator row-major to c (leading dimension ldc, in elements).
TESSERA_DEVICE inline void mma_store(float* c, unsigned ldc, const MmaAccumulator& acc) {
  nvcuda::wmma::store_matrix_sync(c, acc.frag, ldc, nvcuda::wmma::mem_row_major);
}

template <class T>
TESSERA_DEVICE inline T* block_shared() {
  __shared__ __align__(128) unsigned char storage[sizeof(T)];
  return reinterpret_cast<T*>(storage);
}

}  // namespace tessera::device::platform
#else
namespace tessera::device::platform {

inline constexpr bool kHasTensorCoreMma = false;
enum class MmaInput { f16, bf16 };
struct MmaAccumulator {};

TESSERA_DEVICE inline void mma_zero(MmaAccumulator&) {}

template <MmaInput kIn>
TESSERA_NORETURN TESSERA_DEVICE inline void mma_16x16x16(MmaAccumulator&, const void*, unsigned,
                                                         const void*, unsigned) {
  report_failure(FailureCode::invalid_argument, "tensor-core MMA called where there is none");
}

TESSERA_NORETURN TESSERA_DEVICE inline void mma_store(float*, unsigned, const MmaAccumulator&) {
  report_failure(FailureCode::invalid_argument, "tensor-core MMA called where there is none");
}

template <class T>
TESSERA_NORETURN TESSERA_DEVICE inline T* block_shared() {
  report_failure(FailureCode::invalid_argument, "block_shared called where there is none");
}

}  // namespace tessera::device::platform
#endif
