// Bodies of rma.hpp's transfers and scalar forms: the pointer and byte forms build the 1 x count
// tile and take the tile form's path (checks, proxy or mapped copy), each naming itself in
// diagnostics.
#pragma once

#include <cstddef>

#include "tessera/device/impl/rma_funcs.hpp"
#include "tessera/device/rma.hpp"

namespace tessera::device {

namespace detail {
using Byte = unsigned char;

TESSERA_HOST_DEVICE inline Tile<Byte> byte_tile(void* p, std::size_t bytes) {
  return make_tile(static_cast<Byte*>(p), bytes);
}
TESSERA_HOST_DEVICE inline Tile<const Byte> byte_tile(const void* p, std::size_t bytes) {
  return make_tile(static_cast<const Byte*>(p), bytes);
}
}  // namespace detail

// rma.hpp's table of transfers: the tile form, the pointer form as a 1 x count tile, the byte form
// as a 1 x bytes tile of unsigned char.
#define TESSERA_DEVICE_DEFINE_TRANSFER(name, byte_name, op, blocking)                              \
  template <class G, class T>                                                                      \
  TESSERA_KERNEL_CODE void name(G g, const Context& ctx, Tile<T> dst,                              \
                                detail::identity_t<Tile<const T>> src, int pe) {                   \
    detail::transfer<ProxyOp::op, blocking>(g, ctx, dst, src, pe, #name);                          \
  }                                                                                                \
  template <class G, class T>                                                                      \
  TESSERA_KERNEL_CODE void name(G g, const Context& ctx, T* dst, detail::identity_t<const T*> src, \
                                std::size_t count, int pe) {                                       \
    detail::transfer<ProxyOp::op, blocking>(g, ctx, make_tile(dst, count), make_tile(src, count),  \
                                            pe, #name);                                            \
  }                                                                                                \
  template <class G>                                                                               \
  TESSERA_KERNEL_CODE void byte_name(G g, const Context& ctx, void* dst, const void* src,          \
                                     std::size_t bytes, int pe) {                                  \
    detail::transfer<ProxyOp::op, blocking>(g, ctx, detail::byte_tile(dst, bytes),                 \
                                            detail::byte_tile(src, bytes), pe, #byte_name);        \
  }
TESSERA_DEVICE_TRANSFERS(TESSERA_DEVICE_DEFINE_TRANSFER)
#undef TESSERA_DEVICE_DEFINE_TRANSFER

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
