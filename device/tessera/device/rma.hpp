// Remote memory access: tiles between this PE's memory and a peer's symmetric heap. All threads
// of group `g` call together; the group's threads share the copy. A tile is a symmetric address
// when its pointer lies in this PE's heap: it names the object at the same offset on `pe`.
#pragma once

#include <cstddef>

#include "tessera/device/context.hpp"
#include "tessera/device/group.hpp"
#include "tessera/device/impl/check.hpp"
#include "tessera/device/tile.hpp"

namespace tessera::device {

// The transfers, one row each: X(name, byte form's name, ProxyOp, blocking). Every row is
// declared in three forms, the threads of `g` calling together and sharing the copy:
//   name(g, ctx, Tile<T> dst, Tile<const T> src, int pe): tiles of one shape;
//   name(g, ctx, T* dst, const T* src, std::size_t count, int pe): `count` contiguous elements,
//       no Tile (the same paths as a 1 x count tile);
//   <byte form's name>(g, ctx, void* dst, const void* src, std::size_t bytes, int pe): `bytes`
//       bytes between local memory and the symmetric heap on `pe`.
//   put      copies local `src` into symmetric `dst` on `pe`; on return `src` is reusable and the
//            data is visible to `pe` once a later release (fence + signal, put_signal, quiet,
//            barrier) is acquired.
//   get      copies symmetric `src` on `pe` into local `dst`; on return `dst` holds the data.
//   put_nbi  put that may return before the copy is done; it is complete (src reusable, data
//            delivered) after quiet(), and ordered before later puts to the same PE by fence().
//   get_nbi  get that may return before `dst` holds the data; `dst` is complete after quiet().
#define TESSERA_DEVICE_TRANSFERS(X)  \
  X(put, putmem, put, true)          \
  X(get, getmem, get, true)          \
  X(put_nbi, putmem_nbi, put, false) \
  X(get_nbi, getmem_nbi, get, false)

#define TESSERA_DEVICE_DECLARE_TRANSFER(name, byte_name, op, blocking)                             \
  template <class G, class T>                                                                      \
  TESSERA_KERNEL_CODE void name(G g, const Context& ctx, Tile<T> dst,                              \
                                detail::identity_t<Tile<const T>> src, int pe);                    \
  template <class G, class T>                                                                      \
  TESSERA_KERNEL_CODE void name(G g, const Context& ctx, T* dst, detail::identity_t<const T*> src, \
                                std::size_t count, int pe);                                        \
  template <class G>                                                                               \
  TESSERA_KERNEL_CODE void byte_name(G g, const Context& ctx, void* dst, const void* src,          \
                                     std::size_t bytes, int pe);
TESSERA_DEVICE_TRANSFERS(TESSERA_DEVICE_DECLARE_TRANSFER)
#undef TESSERA_DEVICE_DECLARE_TRANSFER

// --- scalar forms, called by one thread ---

// Stores `value` into symmetric `dst` on `pe` as one relaxed word write (so a flag written with p
// may be polled with an atomic load); visible to `pe` as a put is (after a fence + signal, quiet
// or barrier). T is a tile element type: 1, 2, 4 or 8 bytes.
template <class T>
TESSERA_KERNEL_CODE void p(const Context& ctx, T* dst, detail::identity_t<T> value, int pe);

// Reads symmetric `src` on `pe` as one word read and returns it.
template <class T>
TESSERA_KERNEL_CODE T g(const Context& ctx, const T* src, int pe);

// Puts and nbi puts the calling thread issued before the fence reach each target PE before any
// it issues after (a PE that observes a later one observes the earlier ones).
TESSERA_KERNEL_CODE inline void fence(const Context& ctx);
// The group form: every thread's earlier puts are ordered before every thread's later ones.
template <class G>
TESSERA_KERNEL_CODE void fence(G g, const Context& ctx);

// Every put/get (blocking or nbi) the calling thread issued is complete and visible at system
// scope when quiet returns.
TESSERA_KERNEL_CODE inline void quiet(const Context& ctx);
template <class G>
TESSERA_KERNEL_CODE void quiet(G g, const Context& ctx);

}  // namespace tessera::device

#include "tessera/device/impl/rma_funcs.hpp"
