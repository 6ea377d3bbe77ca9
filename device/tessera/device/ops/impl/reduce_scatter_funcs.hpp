// Bodies of ops/reduce_scatter.hpp. Reuse of the staging halves is safe for the reason
// all_reduce_funcs.hpp gives: a member returns from epoch v only after it has heard, directly or
// through the ring, from every member in epoch v.
#pragma once

#include <cstddef>
#include <cstdint>

#include "tessera/device/impl/signal_funcs.hpp"
#include "tessera/device/ops/impl/all_reduce_funcs.hpp"
#include "tessera/device/ops/reduce_scatter.hpp"
#include "tessera/device/signal.hpp"

namespace tessera::device::ops {

template <class T, class G>
TESSERA_KERNEL_CODE void reduce_scatter_one_shot(G g, const Context& ctx, const Team& team,
                                                 AllReduceWorkspace ws, T* out, const T* in,
                                                 std::size_t count, ReduceOp op,
                                                 std::uint64_t first_epoch) {
  if (detail::all_reduce_alone(g, ctx, team, out, in, count)) return;
  const int r = team.my_rank, m = team.size;
  detail::for_each_segment_of(
      count, reduce_scatter_segment_elems<T>(m), first_epoch,
      [&](std::uint64_t epoch, std::size_t off, std::size_t len) {
        // Staging holds this segment of every block, block j at j * len.
        T* stage = reinterpret_cast<T*>(ws.half(epoch));
        for (int j = 0; j < m; ++j) {
          const auto jz = static_cast<std::size_t>(j);
          detail::copy_local(g, ctx, stage + jz * len, in + jz * count + off, len);
        }
        detail::announce_and_hear(g, ctx, team, ws.arrived, epoch,
                                  "reduce_scatter_one_shot waiting for a member's contribution");
        detail::with_op(op, [&](auto o) {
          detail::reduce_members<decltype(o)::value>(
              g, ctx, team, static_cast<const T*>(stage + static_cast<std::size_t>(r) * len),
              out + off, len);
        });
      });
}

template <class T, class G>
TESSERA_KERNEL_CODE void reduce_scatter_ring(G g, const Context& ctx, const Team& team,
                                             AllReduceWorkspace ws, T* out, const T* in,
                                             std::size_t count, ReduceOp op,
                                             std::uint64_t first_epoch) {
  if (detail::all_reduce_alone(g, ctx, team, out, in, count)) return;
  using A = AllReduceAcc<T>;
  const int r = team.my_rank, m = team.size;
  const auto t = static_cast<std::size_t>(g.rank()), nt = static_cast<std::size_t>(g.size());
  detail::for_each_segment_of(
      count, reduce_scatter_segment_elems<T>(m), first_epoch,
      [&](std::uint64_t epoch, std::size_t off, std::size_t len) {
        // Slot k of the staging (len accumulators) receives the partial sum of step k.
        A* stage = reinterpret_cast<A*>(ws.half(epoch));
        // Counter values of this epoch: above every value of earlier epochs (as the all-reduce
        // ring counts them, so the two may follow each other on a team).
        const std::uint64_t base = (epoch - 1) * static_cast<std::uint64_t>(m);
        detail::with_op(op, [&](auto o) {
          constexpr ReduceOp kOp = decltype(o)::value;
          // At step k this member forwards block r - 1 - k: it starts block r - 1 at step 0. The
          // last partial sum to arrive is of block r, which this member owns.
          const A* last = detail::ring_reduce_steps<kOp, T>(
              g, ctx, team, ws, stage, len, base,
              [&](int k) {
                const auto c = static_cast<std::size_t>((r - 1 - k + 2 * m) % m);
                return detail::RingPart<T>{in + c * count + off, len};
              },
              "reduce_scatter_ring waiting for a partial sum from the left");
          const T* x = in + static_cast<std::size_t>(r) * count + off;
          T* y = out + off;
          for (std::size_t i = t; i < len; i += nt)
            y[i] = detail::narrow<T>(detail::combine<kOp>(last[i], detail::widen(x[i])));
        });
        g.sync();
      });
}

}  // namespace tessera::device::ops
