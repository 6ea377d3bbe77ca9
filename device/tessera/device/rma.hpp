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

// Copies local `src` into symmetric `dst` on `pe`; on return `src` is reusable and the data is
// visible to `pe` once a later release (fence + signal, put_signal, quiet, barrier) is acquired.
template <class G, class T>
TESSERA_KERNEL_CODE void put(G g, const Context& ctx, Tile<T> dst,
                             detail::identity_t<Tile<const T>> src, int pe);

// Copies symmetric `src` on `pe` into local `dst`; on return `dst` holds the data.
template <class G, class T>
TESSERA_KERNEL_CODE void get(G g, const Context& ctx, Tile<T> dst,
                             detail::identity_t<Tile<const T>> src, int pe);

// put that may return before the copy is done; it is complete (src reusable, data delivered)
// after quiet(), and ordered before later puts to the same PE by fence().
template <class G, class T>
TESSERA_KERNEL_CODE void put_nbi(G g, const Context& ctx, Tile<T> dst,
                                 detail::identity_t<Tile<const T>> src, int pe);

// get that may return before `dst` holds the data; `dst` is complete after quiet().
template <class G, class T>
TESSERA_KERNEL_CODE void get_nbi(G g, const Context& ctx, Tile<T> dst,
                                 detail::identity_t<Tile<const T>> src, int pe);

// --- pointer forms: `count` contiguous elements, no Tile (the same paths as a 1 x count tile) ---

// put of `count` elements from local `src` into symmetric `dst` on `pe`; guarantees as put.
template <class G, class T>
TESSERA_KERNEL_CODE void put(G g, const Context& ctx, T* dst, detail::identity_t<const T*> src,
                             std::size_t count, int pe);
// get of `count` elements from symmetric `src` on `pe` into local `dst`; complete on return.
template <class G, class T>
TESSERA_KERNEL_CODE void get(G g, const Context& ctx, T* dst, detail::identity_t<const T*> src,
                             std::size_t count, int pe);
// put_nbi / get_nbi of `count` elements; complete after quiet(), as the tile forms.
template <class G, class T>
TESSERA_KERNEL_CODE void put_nbi(G g, const Context& ctx, T* dst, detail::identity_t<const T*> src,
                                 std::size_t count, int pe);
template <class G, class T>
TESSERA_KERNEL_CODE void get_nbi(G g, const Context& ctx, T* dst, detail::identity_t<const T*> src,
                                 std::size_t count, int pe);

// Byte forms: `bytes` bytes between local memory and the symmetric heap on `pe`, guarantees as
// put / get / put_nbi / get_nbi.
template <class G>
TESSERA_KERNEL_CODE void putmem(G g, const Context& ctx, void* dst, const void* src,
                                std::size_t bytes, int pe);
template <class G>
TESSERA_KERNEL_CODE void getmem(G g, const Context& ctx, void* dst, const void* src,
                                std::size_t bytes, int pe);
template <class G>
TESSERA_KERNEL_CODE void putmem_nbi(G g, const Context& ctx, void* dst, const void* src,
                                    std::size_t bytes, int pe);
template <class G>
TESSERA_KERNEL_CODE void getmem_nbi(G g, const Context& ctx, void* dst, const void* src,
                                    std::size_t bytes, int pe);

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
