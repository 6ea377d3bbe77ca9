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
  // Word 0 of the staging half of the call's first epoch on each member: 1 + the heap offset of
  // the root's `in` when members read it directly, 0 when they read the root's `out`.
  auto* where = reinterpret_cast<std::uint64_t*>(ws.half(first_epoch + 1));
  if (r == root) {
    const bool direct = ctx.in_heap(in, count * sizeof(T));
    if (g.rank() == 0) {
      const std::uint64_t word = direct ? 1 + ctx.heap_offset(in) : 0;
      for (int k = 1; k < team.size; ++k) *ctx.ptr(where, team.pe((r + k) % team.size)) = word;
    }
    g.sync();
    if (direct) {
      // Members read `in` where it is; the root's own copy overlaps their reads.
      if (g.rank() == 0) detail::tell_members(ctx, team, ws.arrived, last);
      detail::copy_local(g, ctx, out, in, count);
    } else {
      for (std::uint64_t c = 0; c < chunks; ++c) {
        const std::size_t off = static_cast<std::size_t>(c) * chunk;
        detail::copy_local(g, ctx, out + off, in + off, count - off < chunk ? count - off : chunk);
        if (g.rank() == 0) detail::tell_members(ctx, team, ws.arrived, first_epoch + c + 1);
      }
    }
  } else {
    const int from = team.pe(root);
    device::detail::wait_from(g, ctx, &ws.arrived[root], Cmp::ge, first_epoch + 1, from,
                              "broadcast waiting for a chunk from the root");
    const std::uint64_t word = *where;  // written before the root's release of arrived
    if (word != 0) {
      const T* src = reinterpret_cast<const T*>(ctx.local_base() + (word - 1));
      get(g, ctx, make_tile(out, count), make_tile(src, count), from);
    } else {
      for (std::uint64_t c = 0; c < chunks; ++c) {
        const std::size_t off = static_cast<std::size_t>(c) * chunk;
        const std::size_t len = count - off < chunk ? count - off : chunk;
        device::detail::wait_from(g, ctx, &ws.arrived[root], Cmp::ge, first_epoch + c + 1, from,
                                  "broadcast waiting for a chunk from the root");
        get(g, ctx, make_tile(out + off, len), make_tile(static_cast<const T*>(out + off), len),
            from);
      }
    }
  }
  if (g.rank() == 0) detail::tell_members(ctx, team, ws.done, last);
  detail::hear_members(g, ctx, team, ws.done, last, "broadcast waiting for a member to finish");
}

}  // namespace tessera::device::ops
