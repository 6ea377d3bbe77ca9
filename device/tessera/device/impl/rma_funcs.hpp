// Bodies of rma.hpp.
#pragma once

#include <cstddef>
#include <cstdint>

#include "tessera/device/rma.hpp"

namespace tessera::device {
namespace detail {

// One 16-byte piece of a group copy: a single 128-bit load and store on GPUs when both sides are
// 16-byte aligned.
struct alignas(16) CopyPiece16 {
  std::uint64_t lo, hi;
};

// Copies `bytes` with all threads of `g` in accesses of type Word, interleaved so that adjacent
// threads touch adjacent words (thread i moves words i, i + n, i + 2n, ...: coalesced on GPUs).
// dst and src are equally misaligned for Word: the ragged head (before the first aligned word)
// and tail (after the last whole word) move byte by byte, one byte per thread.
template <class Word, class G>
TESSERA_KERNEL_CODE void group_copy_as(G g, unsigned char* d, const unsigned char* s,
                                       std::size_t bytes) {
  const auto n = static_cast<std::size_t>(g.size());
  const auto i = static_cast<std::size_t>(g.rank());
  std::size_t head =
      (sizeof(Word) - reinterpret_cast<std::uintptr_t>(d) % sizeof(Word)) % sizeof(Word);
  if (head > bytes) head = bytes;
  const std::size_t words = (bytes - head) / sizeof(Word);
  auto* dw = reinterpret_cast<Word*>(d + head);
  const auto* sw = reinterpret_cast<const Word*>(s + head);
  for (std::size_t w = i; w < words; w += n) dw[w] = sw[w];
  for (std::size_t b = i; b < head; b += n) d[b] = s[b];
  for (std::size_t b = head + words * sizeof(Word) + i; b < bytes; b += n) d[b] = s[b];
}

// Copies `bytes` between non-overlapping ranges with every thread of `g`. A one-thread group
// (every group on the host backend) copies alone with platform::copy_bytes (memcpy on the host);
// a GPU group interleaves the widest pieces both sides' alignment allows, 16 bytes when dst and
// src are equally misaligned modulo 16.
template <class G>
TESSERA_KERNEL_CODE void group_copy_bytes(G g, void* dst, const void* src, std::size_t bytes) {
  if (g.size() == 1) {
    platform::copy_bytes(dst, src, bytes);
    return;
  }
  auto* d = static_cast<unsigned char*>(dst);
  const auto* s = static_cast<const unsigned char*>(src);
  const auto skew = reinterpret_cast<std::uintptr_t>(d) ^ reinterpret_cast<std::uintptr_t>(s);
  if (skew % 16 == 0) {
    group_copy_as<CopyPiece16>(g, d, s, bytes);
  } else if (skew % 8 == 0) {
    group_copy_as<std::uint64_t>(g, d, s, bytes);
  } else if (skew % 4 == 0) {
    group_copy_as<std::uint32_t>(g, d, s, bytes);
  } else if (skew % 2 == 0) {
    group_copy_as<std::uint16_t>(g, d, s, bytes);
  } else {
    group_copy_as<std::uint8_t>(g, d, s, bytes);
  }
}

// The widest access, 1, 2, 4 or 8 bytes, that divides kBytes and that both addresses are aligned
// to: the lowest set bit of their bits, kBytes' and 8's. An element's alignment may be below its
// size (struct {int a, b;} is 8 bytes aligned to 4), so the size alone does not say.
template <std::size_t kBytes>
TESSERA_HOST_DEVICE constexpr std::size_t element_access_bytes(std::uintptr_t d, std::uintptr_t s) {
  const std::uintptr_t bits = d | s | kBytes | 8u;
  return static_cast<std::size_t>(bits & (~bits + 1));
}

// Copies kBytes as relaxed atomic accesses of kWord bytes each, by the calling thread alone.
template <std::size_t kWord, std::size_t kBytes>
TESSERA_KERNEL_CODE void copy_words_relaxed(unsigned char* d, const unsigned char* s) {
  for (std::size_t i = 0; i + kWord <= kBytes; i += kWord)
    platform::copy_word_relaxed<kWord>(d + i, s + i);
}

// Copies one element by the calling thread in the widest atomic accesses its size and the two
// addresses allow: one access for an aligned element of 1, 2, 4 or 8 bytes, so a one-element
// put can serve as a flag polled with an atomic load; equal pieces otherwise, never a word wider
// than the addresses' alignment (a misaligned atomic is undefined on the host and faults on GPUs).
template <class T>
TESSERA_KERNEL_CODE void copy_element(T* dst, const T* src) {
  auto* d = reinterpret_cast<unsigned char*>(dst);
  const auto* s = reinterpret_cast<const unsigned char*>(src);
  switch (element_access_bytes<sizeof(T)>(reinterpret_cast<std::uintptr_t>(d),
                                          reinterpret_cast<std::uintptr_t>(s))) {
    case 8:
      copy_words_relaxed<8, sizeof(T)>(d, s);
      break;
    case 4:
      copy_words_relaxed<4, sizeof(T)>(d, s);
      break;
    case 2:
      copy_words_relaxed<2, sizeof(T)>(d, s);
      break;
    default:
      copy_words_relaxed<1, sizeof(T)>(d, s);
      break;
  }
}

// Copies a tile between two mapped addresses. Contiguous tiles move as one run of bytes shared by
// the whole group (group_copy_bytes); a strided tile whose rows hold at least one 16-byte piece
// per thread moves row after row, each shared by the whole group; narrower rows are strided
// across the group's threads, one row per thread. A one-element tile moves in atomic accesses
// (copy_element) so it can serve as a flag.
template <class G, class T>
TESSERA_KERNEL_CODE void copy_tile(G g, Tile<T> dst, Tile<const T> src) {
  if (dst.empty()) return;
  if (dst.rows == 1 && dst.cols == 1) {
    if (g.rank() == 0) copy_element(dst.data, src.data);
    return;
  }
  if (dst.is_contiguous() && src.is_contiguous()) {
    group_copy_bytes(g, dst.data, src.data, dst.size() * sizeof(T));
    return;
  }
  const std::size_t row_bytes = dst.cols * sizeof(T);
  const auto n = static_cast<std::size_t>(g.size());
  if (n > 1 && row_bytes >= n * sizeof(CopyPiece16)) {
    for (std::size_t r = 0; r < dst.rows; ++r)
      group_copy_bytes(g, dst.row(r), src.row(r), row_bytes);
    return;
  }
  for (auto r = static_cast<std::size_t>(g.rank()); r < dst.rows; r += n) {
    platform::copy_bytes(dst.row(r), src.row(r), row_bytes);
  }
}

// Hands a tile transfer between local memory and the symmetric `heap_tile` on `pe` to the
// network proxy: one descriptor for contiguous tiles, else one per row, rows strided across the
// group. With `wait`, each thread returns once its descriptors (and every earlier one) completed.
template <class G, class H, class L>
TESSERA_KERNEL_CODE void proxy_tile(G g, const Context& ctx, ProxyOp op, Tile<H> heap_tile,
                                    Tile<L> local_tile, int pe, bool wait, const char* what) {
  if (heap_tile.empty()) return;
  bool pushed = false;
  std::uint64_t last = 0;
  if (heap_tile.is_contiguous() && local_tile.is_contiguous()) {
    if (g.rank() == 0) {
      last = proxy_push(ctx,
                        encode_proxy_rma(op, pe, ctx.heap_offset(heap_tile.data),
                                         reinterpret_cast<std::uintptr_t>(local_tile.data),
                                         heap_tile.size() * sizeof(H)),
                        what);
      pushed = true;
    }
  } else {
    for (auto r = static_cast<std::size_t>(g.rank()); r < heap_tile.rows;
         r += static_cast<std::size_t>(g.size())) {
      last = proxy_push(ctx,
                        encode_proxy_rma(op, pe, ctx.heap_offset(heap_tile.row(r)),
                                         reinterpret_cast<std::uintptr_t>(local_tile.row(r)),
                                         heap_tile.cols * sizeof(H)),
                        what);
      pushed = true;
    }
  }
  if (wait && pushed) proxy_wait_completed(ctx, last + 1, what);
}

// A tile transfer with the symmetric heap of `pe`: `heap` is the tile there (put's destination,
// get's source), `local` the other end. Checks `heap`, then hands the transfer to the network
// proxy or copies through the mapped address.
template <ProxyOp kOp, class G, class H, class L>
TESSERA_KERNEL_CODE void transfer_tile(G g, const Context& ctx, Tile<H> heap, Tile<L> local, int pe,
                                       const char* what, bool wait) {
  check_in_heap(ctx, heap.data, heap.extent_bytes(), what,
                kOp == ProxyOp::put ? "destination tile" : "source tile");
  if (use_proxy(ctx, pe, what)) {
    proxy_tile(g, ctx, kOp, heap, local, pe, wait, what);
    return;
  }
  const Tile<H> remote = heap.with_data(translate(ctx, heap.data, pe, what));
  if constexpr (kOp == ProxyOp::put) {
    copy_tile(g, remote, local);
  } else {
    copy_tile(g, local, remote);
  }
}

// The body of every put (kOp = ProxyOp::put) and get (ProxyOp::get), `what` naming the call in
// diagnostics. `wait` matters for the proxy alone: see transfer.
template <ProxyOp kOp, class G, class T>
TESSERA_KERNEL_CODE void rma_impl(G g, const Context& ctx, Tile<T> dst, Tile<const T> src, int pe,
                                  const char* what, bool wait = true) {
  static_assert(is_group_v<G>, "the first argument is a group: Thread, Warp or Block");
  static_assert(kOp == ProxyOp::put || kOp == ProxyOp::get, "a tile transfer is a put or a get");
  check_shapes(ctx, dst, src, what);
  if constexpr (kOp == ProxyOp::put) {
    transfer_tile<kOp>(g, ctx, dst, src, pe, what, wait);
  } else {
    transfer_tile<kOp>(g, ctx, src, dst, pe, what, wait);
  }
}

// The body of rma.hpp's transfers (TESSERA_DEVICE_TRANSFERS), `what` naming the call. Mapped
// peers: the copy is done by the issuing threads, so an nbi call completes before it returns;
// quiet and fence then only order. Proxy peers: nbi calls return once the descriptors are in the
// ring; fence queues a fence descriptor, quiet waits for every ticket. A blocking call also syncs
// the group, so each thread returns once the whole transfer is done.
template <ProxyOp kOp, bool kBlocking, class G, class T>
TESSERA_KERNEL_CODE void transfer(G g, const Context& ctx, Tile<T> dst, Tile<const T> src, int pe,
                                  const char* what) {
  rma_impl<kOp>(g, ctx, dst, src, pe, what, kBlocking);
  if constexpr (kBlocking) g.sync();
}

TESSERA_KERNEL_CODE inline void proxy_fence(const Context& ctx) {
  if (ctx.proxy == nullptr) return;
  proxy_push(ctx, encode_proxy_fence(ctx.my_pe), "fence");
}
}  // namespace detail

TESSERA_KERNEL_CODE inline void fence(const Context& ctx) {
  platform::fence(Sem::release, Scope::system);
  detail::proxy_fence(ctx);
}

template <class G>
TESSERA_KERNEL_CODE void fence(G g, const Context& ctx) {
  g.sync();
  platform::fence(Sem::release, Scope::system);
  if (g.rank() == 0) detail::proxy_fence(ctx);
  g.sync();
}

TESSERA_KERNEL_CODE inline void quiet(const Context& ctx) {
  detail::proxy_quiet(ctx, "quiet");
  // Sequentially consistent, not acq_rel: after quiet this thread's puts are complete, so a
  // later load by it, or by any PE it then synchronises with, must not be ordered before them
  // (store buffering; docs/memory-model.md "quiet and fence"). fence() only orders puts among
  // themselves, so a release fence is enough there.
  platform::fence_sc(Scope::system);
}

template <class G>
TESSERA_KERNEL_CODE void quiet(G g, const Context& ctx) {
  g.sync();
  quiet(ctx);
}

}  // namespace tessera::device

// The transfers and the scalar forms, over transfer and rma_impl above.
#include "tessera/device/impl/rma_forms_funcs.hpp"
