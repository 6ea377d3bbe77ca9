// The one transfer routine behind every put and get of the C API: elements of kBytes bytes,
// moved as tiles of integer words through the device API (mapped peers by load/store, other
// nodes through the network proxy).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "shmem/state.hpp"

namespace tessera::shmem {

enum class Direction { put, get };

// How an element of kBytes bytes is moved: `count` words of type `type` (16-byte elements, long
// double and the 128-bit routines, as two 64-bit words).
template <std::size_t kBytes>
struct ElementWords {
  using type = typename WordOf<kBytes, false>::type;
  static constexpr std::size_t count = 1;
};
template <>
struct ElementWords<16> {
  using type = std::uint64_t;
  static constexpr std::size_t count = 2;
};

// A dense run of `n` elements as a 1 x (n * words) tile, or (when either side of the transfer
// is strided, so both tiles have one shape) every stride-th element as an n x words tile with
// leading dimension stride * words.
template <std::size_t kBytes, class P>
auto element_tile(P* p, std::size_t n, std::size_t stride, bool dense) {
  using E = ElementWords<kBytes>;
  using W = std::conditional_t<std::is_const_v<P>, const typename E::type, typename E::type>;
  auto* words = reinterpret_cast<W*>(p);
  if (dense) return device::Tile<W>(words, 1, n * E::count);
  return device::Tile<W>(words, n, E::count, stride * E::count);
}

// Bytes spanned by n elements every stride-th element.
template <std::size_t kBytes>
std::size_t span_bytes(std::size_t n, std::size_t stride) {
  return n == 0 ? 0 : ((n - 1) * stride + 1) * kBytes;
}

// Strides of iput/iget must be positive.
inline std::size_t checked_stride(const char* routine, std::ptrdiff_t stride, const char* name) {
  if (stride < 1)
    die(routine, std::string(name) + " is " + std::to_string(stride) + "; strides must be >= 1");
  return static_cast<std::size_t>(stride);
}

// A put (dest symmetric on `pe`, source local) or a get (source symmetric on `pe`, dest local) of
// n elements; strides in elements. `nbi`: complete at shmem_quiet instead of on return.
template <std::size_t kBytes>
void transfer(const char* routine, Direction dir, void* dest, const void* source, std::size_t n,
              std::size_t dst_stride, std::size_t src_stride, int pe, bool nbi) {
  State& s = state(routine);
  require_pe(s, routine, pe);
  if (n == 0) return;
  // The heap's Context, or the static data's when the symmetric side is a static object.
  const device::Context& ctx =
      dir == Direction::put
          ? symmetric_ctx(s, routine, dest, span_bytes<kBytes>(n, dst_stride), "destination", pe)
          : symmetric_ctx(s, routine, source, span_bytes<kBytes>(n, src_stride), "source", pe);
  const bool dense = dst_stride == 1 && src_stride == 1;
  // The fast path of small and dense transfers to a mapped peer (the message rate of issue 20):
  // with checked mode off there is no allocation to look up, so the copy is one translation and
  // a memcpy (a single-element put or get of up to 8 bytes: one atomic access, so a peer polling
  // it sees the old or the new value, as the device path's copy guarantees).
  if (dense && !ctx.checked()) {
    const void* symmetric = dir == Direction::put ? dest : source;
    if (char* remote = static_cast<char*>(ctx.ptr(const_cast<void*>(symmetric), pe));
        remote != nullptr) {
      if constexpr (kBytes <= 8) {
        if (n == 1) {
          using W = typename ElementWords<kBytes>::type;
          if (dir == Direction::put) {
            W w;
            std::memcpy(&w, source, kBytes);
            __atomic_store_n(reinterpret_cast<W*>(remote), w, __ATOMIC_RELAXED);
          } else {
            const W w = __atomic_load_n(reinterpret_cast<const W*>(remote), __ATOMIC_RELAXED);
            std::memcpy(dest, &w, kBytes);
          }
          return;
        }
      }
      if (dir == Direction::put) {
        std::memcpy(remote, source, n * kBytes);
      } else {
        std::memcpy(dest, remote, n * kBytes);
      }
      return;
    }
  }
  auto dst = element_tile<kBytes>(dest, n, dst_stride, dense);
  auto src = element_tile<kBytes>(source, n, src_stride, dense);
  guarded(routine, [&] {
    const device::Thread one;
    if (dir == Direction::put) {
      if (nbi) {
        device::put_nbi(one, ctx, dst, src, pe);
      } else {
        device::put(one, ctx, dst, src, pe);
      }
    } else {
      if (nbi) {
        device::get_nbi(one, ctx, dst, src, pe);
      } else {
        device::get(one, ctx, dst, src, pe);
      }
    }
  });
}

}  // namespace tessera::shmem
