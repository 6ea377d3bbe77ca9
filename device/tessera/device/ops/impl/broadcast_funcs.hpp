// Body of ops/broadcast.hpp. The final round in which every member hears from every member keeps
// the team's invariant that the staging halves rely on (all_reduce_funcs.hpp): once a member has
// finished epoch v, every member has entered it.
#pragma once

#include <cstddef>
#include <cstdint>

#include "tessera/device/impl/signal_funcs.hpp"
#include "tessera/device/ops/broadcast.hpp"
#include "tessera/device/ops/impl/all_reduce_funcs.hpp"
#include "tessera/device/rma.hpp"
#include "tessera/device/signal.hpp"
#include "tessera/device/tile.hpp"

namespace tessera::device::ops {

template <class T, class G>
TESSERA_KERNEL_CODE void broadcast(G g, const Context& ctx, const Team& team, AllReduceWorkspace ws,
                                   T* out, const T* in, std::size_t count, int root,
                                   std::uint64_t first_epoch) {
  const int r = team.my_rank;
  const std::size_t chunk = broadcast_chunk_elems<T>();
  const std::uint64_t chunks = broadcast_segments<T>(count);
  const std::uint64_t last = first_epoch + chunks;
  if (team.size == 1) {
    detail::copy_local(g, ctx, out, in, count);
    return;
  }
  if (r == root) {
    if (static_cast<const T*>(out) == in) {
      if (g.rank() == 0) detail::tell_members(ctx, team, ws.arrived, last);
    } else {
      for (std::uint64_t c = 0; c < chunks; ++c) {
        const std::size_t off = static_cast<std::size_t>(c) * chunk;
        detail::copy_local(g, ctx, out + off, in + off, count - off < chunk ? count - off : chunk);
        if (g.rank() == 0) detail::tell_members(ctx, team, ws.arrived, first_epoch + c + 1);
      }
    }
  } else {
    const int from = team.pe(root);
    for (std::uint64_t c = 0; c < chunks; ++c) {
      const std::size_t off = static_cast<std::size_t>(c) * chunk;
      const std::size_t len = count - off < chunk ? count - off : chunk;
      device::detail::wait_from(g, ctx, &ws.arrived[root], Cmp::ge, first_epoch + c + 1, from,
                                "broadcast waiting for a chunk from the root");
      get(g, ctx, make_tile(out + off, len), make_tile(static_cast<const T*>(out + off), len),
          from);
    }
  }
  if (g.rank() == 0) detail::tell_members(ctx, team, ws.done, last);
  detail::hear_members(g, ctx, team, ws.done, last, "broadcast waiting for a member to finish");
}

}  // namespace tessera::device::ops
