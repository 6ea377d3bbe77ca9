// Bodies of rma.hpp.
#pragma once

#include <cstddef>
#include <cstdint>

#include "tessera/device/rma.hpp"

namespace tessera::device {
namespace detail {

// Copies a tile between two mapped addresses. Contiguous tiles move as one run of bytes split
// into 64-byte-aligned chunks across the group; strided tiles move row by row, rows strided
// across the group; a one-element tile moves as one atomic word so it can serve as a flag.
template <class G, class T>
TESSERA_DEVICE void copy_tile(G g, Tile<T> dst, Tile<const T> src) {
  if (dst.empty()) return;
  if (dst.rows == 1 && dst.cols == 1) {
    if (g.rank() == 0) platform::copy_word_relaxed<sizeof(T)>(dst.data, src.data);
    return;
  }
  if (dst.is_contiguous() && src.is_contiguous()) {
    const std::size_t bytes = dst.size() * sizeof(T);
    const auto n = static_cast<std::size_t>(g.size());
    std::size_t chunk = (bytes + n - 1) / n;
    chunk = (chunk + 63) / 64 * 64;
    const std::size_t begin = static_cast<std::size_t>(g.rank()) * chunk;
    if (begin < bytes) {
      const std::size_t len = bytes - begin < chunk ? bytes - begin : chunk;
      platform::copy_bytes(reinterpret_cast<char*>(dst.data) + begin,
                           reinterpret_cast<const char*>(src.data) + begin, len);
    }
    return;
  }
  for (auto r = static_cast<std::size_t>(g.rank()); r < dst.rows;
       r += static_cast<std::size_t>(g.size())) {
    platform::copy_bytes(dst.row(r), src.row(r), dst.cols * sizeof(T));
  }
}

// Hands a tile transfer between local memory and the symmetric `heap_tile` on `pe` to the
// network proxy: one descriptor for contiguous tiles, else one per row, rows strided across the
// group. With `wait`, each thread returns once its descriptors (and every earlier one) completed.
template <class G, class H, class L>
TESSERA_DEVICE void proxy_tile(G g, const Context& ctx, ProxyOp op, Tile<H> heap_tile,
                               Tile<L> local_tile, int pe, bool wait, const char* what) {
  if (heap_tile.empty()) return;
  ProxyDescriptor d{};
  d.op = op;
  d.pe = pe;
  bool pushed = false;
  std::uint64_t last = 0;
  if (heap_tile.is_contiguous() && local_tile.is_contiguous()) {
    if (g.rank() == 0) {
      d.remote_offset = ctx.heap_offset(heap_tile.data);
      d.local = reinterpret_cast<std::uintptr_t>(local_tile.data);
      d.bytes = heap_tile.size() * sizeof(H);
      last = proxy_push(ctx, d, what);
      pushed = true;
    }
  } else {
    for (auto r = static_cast<std::size_t>(g.rank()); r < heap_tile.rows;
         r += static_cast<std::size_t>(g.size())) {
      d.remote_offset = ctx.heap_offset(heap_tile.row(r));
      d.local = reinterpret_cast<std::uintptr_t>(local_tile.row(r));
      d.bytes = heap_tile.cols * sizeof(H);
      last = proxy_push(ctx, d, what);
      pushed = true;
    }
  }
  if (wait && pushed) proxy_wait_completed(ctx, last + 1, what);
}

template <class G, class T>
TESSERA_DEVICE void put_impl(G g, const Context& ctx, Tile<T> dst, Tile<const T> src, int pe,
                             const char* what, bool wait = true) {
  static_assert(is_group_v<G>, "the first argument is a group: Thread, Warp or Block");
  check_shapes(ctx, dst, src, what);
  check_in_heap(ctx, dst.data, dst.extent_bytes(), what, "destination tile");
  if (use_proxy(ctx, pe, what)) {
    proxy_tile(g, ctx, ProxyOp::put, dst, src, pe, wait, what);
    return;
  }
  Tile<T> remote = dst.with_data(translate(ctx, dst.data, pe, what));
  copy_tile(g, remote, src);
}

template <class G, class T>
TESSERA_DEVICE void get_impl(G g, const Context& ctx, Tile<T> dst, Tile<const T> src, int pe,
                             const char* what, bool wait = true) {
  static_assert(is_group_v<G>, "the first argument is a group: Thread, Warp or Block");
  check_shapes(ctx, dst, src, what);
  check_in_heap(ctx, src.data, src.extent_bytes(), what, "source tile");
  if (use_proxy(ctx, pe, what)) {
    proxy_tile(g, ctx, ProxyOp::get, src, dst, pe, wait, what);
    return;
  }
  Tile<const T> remote = src.with_data(translate(ctx, src.data, pe, what));
  copy_tile(g, dst, remote);
}

}  // namespace detail

template <class G, class T>
TESSERA_DEVICE void put(G g, const Context& ctx, Tile<T> dst, detail::identity_t<Tile<const T>> src,
                        int pe) {
  detail::put_impl(g, ctx, dst, src, pe, "put");
  g.sync();
}

template <class G, class T>
TESSERA_DEVICE void get(G g, const Context& ctx, Tile<T> dst, detail::identity_t<Tile<const T>> src,
                        int pe) {
  detail::get_impl(g, ctx, dst, src, pe, "get");
  g.sync();
}

// Mapped peers: the copy is done by the issuing threads, so an nbi call completes before it
// returns; quiet and fence then only order. Proxy peers: nbi calls return once the descriptors
// are in the ring; fence queues a fence descriptor, quiet waits for every ticket.
template <class G, class T>
TESSERA_DEVICE void put_nbi(G g, const Context& ctx, Tile<T> dst,
                            detail::identity_t<Tile<const T>> src, int pe) {
  detail::put_impl(g, ctx, dst, src, pe, "put_nbi", false);
}

template <class G, class T>
TESSERA_DEVICE void get_nbi(G g, const Context& ctx, Tile<T> dst,
                            detail::identity_t<Tile<const T>> src, int pe) {
  detail::get_impl(g, ctx, dst, src, pe, "get_nbi", false);
}

namespace detail {
TESSERA_DEVICE inline void proxy_fence(const Context& ctx) {
  if (ctx.proxy == nullptr) return;
  ProxyDescriptor d{};
  d.op = ProxyOp::fence;
  d.pe = ctx.my_pe;
  proxy_push(ctx, d, "fence");
}
}  // namespace detail

TESSERA_DEVICE inline void fence(const Context& ctx) {
  platform::fence(Sem::release, Scope::system);
  detail::proxy_fence(ctx);
}

template <class G>
TESSERA_DEVICE void fence(G g, const Context& ctx) {
  g.sync();
  platform::fence(Sem::release, Scope::system);
  if (g.rank() == 0) detail::proxy_fence(ctx);
  g.sync();
}

TESSERA_DEVICE inline void quiet(const Context& ctx) {
  detail::proxy_quiet(ctx, "quiet");
  platform::fence(Sem::acq_rel, Scope::system);
}

template <class G>
TESSERA_DEVICE void quiet(G g, const Context& ctx) {
  g.sync();
  quiet(ctx);
}

}  // namespace tessera::device
