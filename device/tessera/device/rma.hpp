// Remote memory access: tiles between this PE's memory and a peer's symmetric heap. All threads
// of group `g` call together; the group's threads share the copy. A tile is a symmetric address
// when its pointer lies in this PE's heap: it names the object at the same offset on `pe`.
#pragma once

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
