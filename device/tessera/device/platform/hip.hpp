// The HIP branch of the platform layer: hipcc's device pass (__HIP_DEVICE_COMPILE__). Atomics are
// the __hip_atomic_* builtins with the memory scope a Scope names; clocks, spin hints and failures
// use s_memrealtime, s_sleep and s_trap. Device-pass code only (__device__).
#pragma once

#include <cstddef>
#include <cstdint>

#include "tessera/device/failure.hpp"
#include "tessera/device/order.hpp"
#include "tessera/device/platform/gpu_copy.hpp"
#include "tessera/device/platform/macros.hpp"

#if defined(__HIPCC__) || defined(__HIP__)
#include <hip/hip_runtime.h>

// After the runtime, whose names it uses.
#include <hip/hip_cooperative_groups.h>

#include <cstdio>
#endif

#if defined(__HIP_DEVICE_COMPILE__)

namespace tessera::device::platform {

namespace detail {

__device__ constexpr int hip_order(Sem sem) {
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

__device__ constexpr int hip_load_order(Sem sem) {
  return (sem == Sem::acquire || sem == Sem::acq_rel) ? __ATOMIC_ACQUIRE : __ATOMIC_RELAXED;
}

__device__ constexpr int hip_store_order(Sem sem) {
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
__device__ inline T atomic_load(const T* p, Sem sem, Scope scope) {
  const int order = detail::hip_load_order(sem);
#define TESSERA_HIP_CALL(s) __hip_atomic_load(p, order, s)
  TESSERA_HIP_SCOPED(TESSERA_HIP_CALL);
#undef TESSERA_HIP_CALL
}

template <class T>
__device__ inline void atomic_store(T* p, T v, Sem sem, Scope scope) {
  const int order = detail::hip_store_order(sem);
#define TESSERA_HIP_CALL(s) __hip_atomic_store(p, v, order, s)
  TESSERA_HIP_SCOPED(TESSERA_HIP_CALL);
#undef TESSERA_HIP_CALL
}

// atomic_fetch_add, _and, _or, _xor, atomic_exchange, atomic_fetch_min, _max: the
// __hip_atomic_* builtin of the same name.
#define TESSERA_HIP_RMW(op)                                                  \
  template <class T>                                                         \
  __device__ inline T atomic_##op(T* p, T v, Sem sem, Scope scope) {         \
    const int order = detail::hip_order(sem);                                \
    switch (scope) {                                                         \
      case Scope::block:                                                     \
        return __hip_atomic_##op(p, v, order, __HIP_MEMORY_SCOPE_WORKGROUP); \
      case Scope::device:                                                    \
        return __hip_atomic_##op(p, v, order, __HIP_MEMORY_SCOPE_AGENT);     \
      case Scope::system:                                                    \
        break;                                                               \
    }                                                                        \
    return __hip_atomic_##op(p, v, order, __HIP_MEMORY_SCOPE_SYSTEM);        \
  }
TESSERA_GPU_RMW_OPS(TESSERA_HIP_RMW)
#undef TESSERA_HIP_RMW

// Returns the value seen; the swap happened iff it equals `expected`.
template <class T>
__device__ inline T atomic_compare_exchange(T* p, T expected, T desired, Sem sem, Scope scope) {
  const int order = detail::hip_order(sem), failure = detail::hip_load_order(sem);
#define TESSERA_HIP_CALL(s) \
  (__hip_atomic_compare_exchange_strong(p, &expected, desired, order, failure, s), expected)
  TESSERA_HIP_SCOPED(TESSERA_HIP_CALL);
#undef TESSERA_HIP_CALL
}

#undef TESSERA_HIP_SCOPED

// A fence of the given semantics at `scope`; relaxed is a no-op.
__device__ inline void fence(Sem sem, Scope scope) {
  if (sem == Sem::acquire) {
    TESSERA_HIP_FENCE(__ATOMIC_ACQUIRE);
  } else if (sem == Sem::release) {
    TESSERA_HIP_FENCE(__ATOMIC_RELEASE);
  } else if (sem == Sem::acq_rel) {
    TESSERA_HIP_FENCE(__ATOMIC_ACQ_REL);
  }
}

// A sequentially consistent fence at `scope`: also orders earlier stores before later loads for
// every observer at the scope (the store-buffering pattern quiet() must forbid).
__device__ inline void fence_sc(Scope scope) { TESSERA_HIP_FENCE(__ATOMIC_SEQ_CST); }
#undef TESSERA_HIP_FENCE

// Nanoseconds of the constant-rate wall clock (s_memrealtime), counted as 10 ns a tick: its
// rate is 100 MHz on gfx90a (MI200) and gfx94x (MI300). On a device whose rate differs, the
// runtime asks hipDeviceAttributeWallClockRate at init and scales the device deadlines
// (Context::timeout_ns) by rate / 100 MHz, so timeouts stay true (src/gpu/gpu_backend.cpp).
__device__ inline std::uint64_t clock_ns() { return wall_clock64() * 10; }

// A spin-wait turn: free for the first turns, then s_sleep (64 clocks per unit), longer as the
// wait goes on, so waiting wavefronts leave issue slots to the ones doing work.
__device__ inline void spin_pause(std::uint32_t spins) {
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
__attribute__((noinline)) __device__ inline void report_failure(FailureCode code,
                                                                const char* message) {
  printf("tessera: device failure (block %u thread %u, code %u): %s\n",
         static_cast<unsigned>(blockIdx.x), static_cast<unsigned>(threadIdx.x),
         static_cast<unsigned>(code), message);
  asm volatile("s_trap 2" ::: "memory");
}

__device__ inline int warp_size() { return warpSize; }  // 64 on gfx9 (CDNA)
__device__ inline int lane_id() {
  return static_cast<int>(__builtin_amdgcn_mbcnt_hi(~0u, __builtin_amdgcn_mbcnt_lo(~0u, 0u)));
}
__device__ inline int block_threads() { return static_cast<int>(blockDim.x); }
__device__ inline int thread_in_block() { return static_cast<int>(threadIdx.x); }
// Lanes of a wavefront run in step; the fences make each lane's writes visible to the others.
__device__ inline void warp_sync() {
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "wavefront");
  __builtin_amdgcn_wave_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "wavefront");
}
__device__ inline void block_sync() { __syncthreads(); }

// --- group broadcast (the waits return one result in every thread of their group) ---

// The value lane 0 holds, in every lane of the wavefront (after a warp_sync, so lane 0's earlier
// writes are visible to the others).
__device__ inline std::uint64_t warp_broadcast(std::uint64_t v) {
  warp_sync();
  return static_cast<std::uint64_t>(__shfl(static_cast<unsigned long long>(v), 0));
}

// copy_word_relaxed: gpu_copy.hpp.

// --- capabilities ---

// True where atomic_fetch_add works on float: __hip_atomic_fetch_add on float (fine-grained memory,
// so system scope holds).
inline constexpr bool kFloatAtomicAdd = true;

// --- where the caller runs, and grid-wide sync (H-team block: barrier.hpp's one-group check,
// grid.hpp's grid_sync) ---

// 0: HIP has no launch number a kernel can read, so checks that compare launches skip.
__device__ inline std::uint64_t launch_id() { return 0; }
// block_index, GridSyncWords, grid_sync_words, kNativeGridSync, grid_sync_native: gpu_copy.hpp.

}  // namespace tessera::device::platform

#endif  // __HIP_DEVICE_COMPILE__
