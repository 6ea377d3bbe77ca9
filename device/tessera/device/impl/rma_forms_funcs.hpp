// Bodies of rma.hpp's pointer, byte and scalar forms: each builds the 1 x count tile and takes the
// tile form's path (checks, proxy or mapped copy), naming itself in diagnostics.
#pragma once

#include <cstddef>

#include "tessera/device/impl/rma_funcs.hpp"
#include "tessera/device/rma.hpp"

namespace tessera::device {

template <class G, class T>
TESSERA_KERNEL_CODE void put(G g, const Context& ctx, T* dst, detail::identity_t<const T*> src,
                             std::size_t count, int pe) {
  detail::rma_impl<ProxyOp::put>(g, ctx, make_tile(dst, count), make_tile(src, count), pe, "put");
  g.sync();
}

template <class G, class T>
TESSERA_KERNEL_CODE void get(G g, const Context& ctx, T* dst, detail::identity_t<const T*> src,
                             std::size_t count, int pe) {
  detail::rma_impl<ProxyOp::get>(g, ctx, make_tile(dst, count), make_tile(src, count), pe, "get");
  g.sync();
}

template <class G, class T>
TESSERA_KERNEL_CODE void put_nbi(G g, const Context& ctx, T* dst, detail::identity_t<const T*> src,
                                 std::size_t count, int pe) {
  detail::rma_impl<ProxyOp::put>(g, ctx, make_tile(dst, count), make_tile(src, count), pe,
                                 "put_nbi", false);
}

template <class G, class T>
TESSERA_KERNEL_CODE void get_nbi(G g, const Context& ctx, T* dst, detail::identity_t<const T*> src,
                                 std::size_t count, int pe) {
  detail::rma_impl<ProxyOp::get>(g, ctx, make_tile(dst, count), make_tile(src, count), pe,
                                 "get_nbi", false);
}

namespace detail {
using Byte = unsigned char;

TESSERA_HOST_DEVICE inline Tile<Byte> byte_tile(void* p, std::size_t bytes) {
  return make_tile(static_cast<Byte*>(p), bytes);
}
TESSERA_HOST_DEVICE inline Tile<const Byte> byte_tile(const void* p, std::size_t bytes) {
  return make_tile(static_cast<const Byte*>(p), bytes);
}
}  // namespace detail

template <class G>
TESSERA_KERNEL_CODE void putmem(G g, const Context& ctx, void* dst, const void* src,
                                std::size_t bytes, int pe) {
  detail::rma_impl<ProxyOp::put>(g, ctx, detail::byte_tile(dst, bytes),
                                 detail::byte_tile(src, bytes), pe, "putmem");
  g.sync();
}

template <class G>
TESSERA_KERNEL_CODE void getmem(G g, const Context& ctx, void* dst, const void* src,
                                std::size_t bytes, int pe) {
  detail::rma_impl<ProxyOp::get>(g, ctx, detail::byte_tile(dst, bytes),
                                 detail::byte_tile(src, bytes), pe, "getmem");
  g.sync();
}

template <class G>
TESSERA_KERNEL_CODE void putmem_nbi(G g, const Context& ctx, void* dst, const void* src,
                                    std::size_t bytes, int pe) {
  detail::rma_impl<ProxyOp::put>(g, ctx, detail::byte_tile(dst, bytes),
                                 detail::byte_tile(src, bytes), pe, "putmem_nbi", false);
}

template <class G>
TESSERA_KERNEL_CODE void getmem_nbi(G g, const Context& ctx, void* dst, const void* src,
                                    std::size_t bytes, int pe) {
  detail::rma_impl<ProxyOp::get>(g, ctx, detail::byte_tile(dst, bytes),
                                 detail::byte_tile(src, bytes), pe, "getmem_nbi", false);
}

// A blocking one-element put from the caller's own variable: through the proxy it returns only
// once the value left, so `value` may live on the stack.
template <class T>
TESSERA_KERNEL_CODE void p(const Context& ctx, T* dst, detail::identity_t<T> value, int pe) {
  detail::rma_impl<ProxyOp::put>(Thread{}, ctx, make_tile(dst, 1), make_tile<const T>(&value, 1),
                                 pe, "p");
}

template <class T>
TESSERA_KERNEL_CODE T g(const Context& ctx, const T* src, int pe) {
  T out{};
  detail::rma_impl<ProxyOp::get>(Thread{}, ctx, make_tile(&out, 1), make_tile(src, 1), pe, "g");
  return out;
}

}  // namespace tessera::device
