// The part of the platform layer that CUDA's and HIP's device passes share: the list of
// read-modify-write atomics each defines, bulk copies in the widest accesses both sides'
// alignment allows, the one-word relaxed copy, the block broadcast, the block index and the
// cooperative grid sync, and the (empty) time-split probe. Device-pass code only (__device__).
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "tessera/device/order.hpp"
#include "tessera/device/platform/macros.hpp"

#if TESSERA_DEVICE_COMPILE

// threadIdx and __syncthreads: nvcc declares them in every translation unit, hipcc only once
// its runtime header is in. Cooperative groups for the grid sync.
#if defined(__HIP__)
#include <hip/hip_runtime.h>
// After the runtime, whose names it uses.
#include <hip/hip_cooperative_groups.h>
#else
#include <cooperative_groups.h>
#endif

// The read-modify-write atomics of one operand, X(op): cuda.hpp and hip.hpp each define
// atomic_<op>(T* p, T v, Sem sem, Scope scope), returning the previous value, from their
// atomic_ref member or builtin of the same name.
#define TESSERA_GPU_RMW_OPS(X) \
  X(fetch_add) X(fetch_and) X(fetch_or) X(fetch_xor) X(exchange) X(fetch_min) X(fetch_max)

namespace tessera::device::platform {

// The scoped atomic store of each GPU branch (cuda.hpp, hip.hpp), which copy_word_relaxed uses.
template <class T>
__device__ inline void atomic_store(T* p, T v, Sem sem, Scope scope);

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
__device__ inline void copy_bytes_as(unsigned char* d, const unsigned char* s, std::size_t bytes) {
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

// Copies `bytes` between non-overlapping ranges, by the calling thread alone (the caller has
// split the work among the group's threads): 16-byte accesses when dst and src are equally
// misaligned modulo 16, else the widest width they share, with byte-wise ragged edges. Out of
// line: a call costs little next to the copy, and keeps kernels with many puts small.
__attribute__((noinline)) __device__ inline void copy_bytes(void* dst, const void* src,
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

// Copies one element of 1, 2, 4 or 8 bytes as a single relaxed atomic store at system scope.
template <std::size_t kBytes>
__device__ inline void copy_word_relaxed(void* dst, const void* src) {
  using Word = detail::word_t<kBytes>;
  static_assert(sizeof(Word) == kBytes, "copy_word_relaxed takes 1, 2, 4 or 8 bytes");
  Word w;
  __builtin_memcpy(&w, src, kBytes);
  platform::atomic_store(static_cast<Word*>(dst), w, Sem::relaxed, Scope::system);
}

// The value thread 0 holds, in every thread of the block, through one shared word; the barriers
// around it make thread 0's earlier writes visible to the block, and keep the word from being
// overwritten before every thread read it.
__device__ inline std::uint64_t block_broadcast(std::uint64_t v) {
  __shared__ std::uint64_t slot;
  if (threadIdx.x == 0) slot = v;
  __syncthreads();
  v = slot;
  __syncthreads();
  return v;
}

// --- the block's index and grid-wide sync (grid.hpp's grid_sync) ---

__device__ inline int block_index() { return static_cast<int>(blockIdx.x); }
struct GridSyncWords {
  std::uint64_t* arrivals;
  std::uint64_t* done;
};
__device__ inline GridSyncWords grid_sync_words() { return {nullptr, nullptr}; }
// True: a cooperative launch (tessera::launch) syncs its grid with
// cooperative groups; a kernel launched otherwise must not call grid_sync.
inline constexpr bool kNativeGridSync = true;
__device__ inline void grid_sync_native() { cooperative_groups::this_grid().sync(); }

// The time split of issue 19 item 5 probes the host backend only (host.hpp's SplitProbe); on a
// GPU a probe is an empty object.
enum class SplitPart : int { kernel, copy, wait };
struct SplitProbe {
  TESSERA_HOST_DEVICE explicit SplitProbe(SplitPart, int = 0) {}
};

}  // namespace tessera::device::platform

#endif  // TESSERA_DEVICE_COMPILE
