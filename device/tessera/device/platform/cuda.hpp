// The CUDA branch of the platform layer: nvcc's device pass (__CUDA_ARCH__). Atomics are
// cuda::atomic_ref with the thread scope a Scope names; clocks, spin hints and failures use the
// PTX timer, __nanosleep and __trap. Device-pass code only (__device__).
#pragma once

#include <cstddef>
#include <cstdint>

#include "tessera/device/failure.hpp"
#include "tessera/device/order.hpp"
#include "tessera/device/platform/gpu_copy.hpp"
#include "tessera/device/platform/macros.hpp"

#if defined(__CUDACC__)
#include <cooperative_groups.h>
#include <cuda/atomic>

#include <cstdio>
#endif

#if defined(__CUDA_ARCH__)

namespace tessera::device::platform {

namespace detail {

__device__ constexpr cuda::std::memory_order cuda_order(Sem sem) {
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

__device__ constexpr cuda::std::memory_order cuda_load_order(Sem sem) {
  return (sem == Sem::acquire || sem == Sem::acq_rel) ? cuda::std::memory_order_acquire
                                                      : cuda::std::memory_order_relaxed;
}

__device__ constexpr cuda::std::memory_order cuda_store_order(Sem sem) {
  return (sem == Sem::release || sem == Sem::acq_rel) ? cuda::std::memory_order_release
                                                      : cuda::std::memory_order_relaxed;
}

// Calls op(ref) with a cuda::atomic_ref on *p of the thread scope matching `scope`.
template <class T, class Op>
__device__ inline T with_scope(T* p, Scope scope, Op op) {
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
__device__ inline T atomic_load(const T* p, Sem sem, Scope scope) {
  return detail::with_scope(const_cast<T*>(p), scope,
                            [=](auto ref) { return ref.load(detail::cuda_load_order(sem)); });
}

template <class T>
__device__ inline void atomic_store(T* p, T v, Sem sem, Scope scope) {
  detail::with_scope(p, scope, [=](auto ref) {
    ref.store(v, detail::cuda_store_order(sem));
    return T{};
  });
}

// atomic_fetch_add, _and, _or, _xor, atomic_exchange, atomic_fetch_min, _max: cuda::atomic_ref's
// member of the same name at the thread scope `scope` names.
#define TESSERA_CUDA_RMW(op)                                                                 \
  template <class T>                                                                         \
  __device__ inline T atomic_##op(T* p, T v, Sem sem, Scope scope) {                         \
    return detail::with_scope(p, scope,                                                      \
                              [=](auto ref) { return ref.op(v, detail::cuda_order(sem)); }); \
  }
TESSERA_GPU_RMW_OPS(TESSERA_CUDA_RMW)
#undef TESSERA_CUDA_RMW

// Returns the value seen; the swap happened iff it equals `expected`.
template <class T>
__device__ inline T atomic_compare_exchange(T* p, T expected, T desired, Sem sem, Scope scope) {
  return detail::with_scope(p, scope, [=](auto ref) {
    T seen = expected;
    ref.compare_exchange_strong(seen, desired, detail::cuda_order(sem),
                                detail::cuda_load_order(sem));
    return seen;
  });
}

// A fence of the given semantics at `scope` (fence.acq_rel.cta/gpu/sys); relaxed is a no-op.
__device__ inline void fence(Sem sem, Scope scope) {
  if (sem == Sem::relaxed) return;
  const cuda::thread_scope s = scope == Scope::block    ? cuda::thread_scope_block
                               : scope == Scope::device ? cuda::thread_scope_device
                                                        : cuda::thread_scope_system;
  cuda::atomic_thread_fence(detail::cuda_order(sem), s);
}

// A sequentially consistent fence at `scope` (fence.sc.cta/gpu/sys). Unlike fence.acq_rel it
// also orders this thread's earlier stores before its later loads for every observer at the
// scope: the fence.sc instances of all threads are totally ordered, so in a store-buffering
// pattern (each side stores, fences, then loads the other's word) at least one side sees the
// other's store. quiet() needs that (see docs/memory-model.md, "quiet and fence").
__device__ inline void fence_sc(Scope scope) {
  const cuda::thread_scope s = scope == Scope::block    ? cuda::thread_scope_block
                               : scope == Scope::device ? cuda::thread_scope_device
                                                        : cuda::thread_scope_system;
  cuda::atomic_thread_fence(cuda::std::memory_order_seq_cst, s);
}

// Nanoseconds of the GPU's global timer (%globaltimer), for bounded waits.
__device__ inline std::uint64_t clock_ns() {
  std::uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// A spin-wait turn: free for the first turns, then __nanosleep doubling from 32 ns to 1 us so
// waiting warps leave issue slots (and memory bandwidth) to the ones doing work.
__device__ inline void spin_pause(std::uint32_t spins) {
  if (spins < 8) return;
  const std::uint32_t step = spins / 64 < 5 ? spins / 64 : 5;
  __nanosleep(32u << step);
}

// Prints the diagnostic (the CUDA printf buffer reaches the host's stdout at the next
// synchronisation) and traps: the kernel ends, and Stream::synchronize reports a device fault.
[[noreturn]] __device__ inline void report_failure(FailureCode code, const char* message) {
  printf("tessera: device failure (block %u thread %u, code %u): %s\n", blockIdx.x, threadIdx.x,
         static_cast<unsigned>(code), message);
  __trap();
  __builtin_unreachable();
}

__device__ inline constexpr int warp_size() { return 32; }
__device__ inline int lane_id() {
  unsigned lane;
  asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
  return static_cast<int>(lane);
}
__device__ inline int block_threads() { return static_cast<int>(blockDim.x); }
__device__ inline int thread_in_block() { return static_cast<int>(threadIdx.x); }
__device__ inline void warp_sync() { __syncwarp(); }
__device__ inline void block_sync() { __syncthreads(); }

// --- group broadcast (the waits return one result in every thread of their group) ---

// The value lane 0 holds, in every lane of the (full) warp; the shuffle also syncs the warp.
__device__ inline std::uint64_t warp_broadcast(std::uint64_t v) {
  __syncwarp();
  return __shfl_sync(0xffffffffu, static_cast<unsigned long long>(v), 0);
}

// copy_word_relaxed: gpu_copy.hpp.

// --- capabilities ---

// True where atomic_fetch_add works on float: cuda::atomic_ref<float>::fetch_add (red.add.f32 at
// system scope).
inline constexpr bool kFloatAtomicAdd = true;

// --- where the caller runs, and grid-wide sync (H-team block: barrier.hpp's one-group check,
// grid.hpp's grid_sync) ---

// A number naming the launch the caller runs in: PTX's %gridid, plus 1 so that it is never 0.
__device__ inline std::uint64_t launch_id() {
  std::uint64_t id;
  asm volatile("mov.u64 %0, %%gridid;" : "=l"(id));
  return id + 1;
}
// block_index, GridSyncWords, grid_sync_words, kNativeGridSync, grid_sync_native: gpu_copy.hpp.

}  // namespace tessera::device::platform

#endif  // __CUDA_ARCH__
