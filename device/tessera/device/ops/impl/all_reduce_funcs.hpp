// Bodies of ops/all_reduce.hpp.
//
// Why staging plus epochs is enough (no "done reading" handshake before reuse): every algorithm
// returns from epoch v only after it has heard, directly or through the ring, from every member
// in epoch v, so a member that enters epoch v + 2 (the next user of the same staging half) knows
// every member finished epoch v. A member writes another's `out` only after that member has
// entered the epoch (its arrived signal, or the ring's chain, which starts at every member).
#pragma once

#include <cstddef>
#include <cstdint>

#include "tessera/device/impl/signal_funcs.hpp"
#include "tessera/device/ops/all_reduce.hpp"
#include "tessera/device/rma.hpp"
#include "tessera/device/signal.hpp"
#include "tessera/device/tile.hpp"

namespace tessera::device::ops {

namespace detail {

template <class T>
TESSERA_HOST_DEVICE inline AllReduceAcc<T> widen(T v) {
  if constexpr (std::is_same_v<T, half> || std::is_same_v<T, bf16>) {
    return to_float(v);
  } else {
    return v;
  }
}

template <class T>
TESSERA_HOST_DEVICE inline T narrow(AllReduceAcc<T> v) {
  if constexpr (std::is_same_v<T, half>) {
    return to_half(v);
  } else if constexpr (std::is_same_v<T, bf16>) {
    return to_bf16(v);
  } else {
    return v;
  }
}

template <ReduceOp Op, class A>
TESSERA_HOST_DEVICE inline A combine(A a, A b) {
  if constexpr (Op == ReduceOp::sum) {
    return a + b;
  } else if constexpr (Op == ReduceOp::max) {
    return a < b ? b : a;
  } else if constexpr (Op == ReduceOp::min) {
    return b < a ? b : a;
  } else {
    return a * b;
  }
}

// Calls f(std::integral_constant<ReduceOp, op>), so loops are compiled once per op and the
// switch stays outside them.
template <class F>
TESSERA_HOST_DEVICE inline void with_op(ReduceOp op, F&& f) {
  switch (op) {
    case ReduceOp::sum:
      f(std::integral_constant<ReduceOp, ReduceOp::sum>{});
      break;
    case ReduceOp::max:
      f(std::integral_constant<ReduceOp, ReduceOp::max>{});
      break;
    case ReduceOp::min:
      f(std::integral_constant<ReduceOp, ReduceOp::min>{});
      break;
    case ReduceOp::prod:
      f(std::integral_constant<ReduceOp, ReduceOp::prod>{});
      break;
  }
}

// [begin, end) of chunk c when `len` elements are split over m members as evenly as they go.
struct ChunkBounds {
  std::size_t begin, end;
};
TESSERA_HOST_DEVICE inline ChunkBounds chunk_of(std::size_t len, int m, int c) {
  const auto mz = static_cast<std::size_t>(m), cz = static_cast<std::size_t>(c);
  return ChunkBounds{len * cz / mz, len * (cz + 1) / mz};
}

// Sets `word`'s slot of this member (words[my_rank]) to `epoch` on every other member, with
// release: called by one thread after the group's writes.
TESSERA_KERNEL_CODE inline void tell_members(const Context& ctx, const Team& team,
                                             std::uint64_t* words, std::uint64_t epoch) {
  const int r = team.my_rank, m = team.size;
  for (int k = 1; k < m; ++k) {
    signal(ctx, &words[r], epoch, SignalOp::set, team.pe((r + k) % m));
  }
}

// Waits until every other member has set its slot of `words` here to >= epoch.
template <class G>
TESSERA_KERNEL_CODE void hear_members(G g, const Context& ctx, const Team& team,
                                      const std::uint64_t* words, std::uint64_t epoch,
                                      const char* what) {
  const int r = team.my_rank, m = team.size;
  for (int k = 1; k < m; ++k) {
    const int j = (r + m - k) % m;
    device::detail::wait_from(g, ctx, &words[j], Cmp::ge, epoch, team.pe(j), what);
  }
}

// tell_members from the group's first thread, then hear_members.
template <class G>
TESSERA_KERNEL_CODE void announce_and_hear(G g, const Context& ctx, const Team& team,
                                           std::uint64_t* words, std::uint64_t epoch,
                                           const char* what) {
  if (g.rank() == 0) tell_members(ctx, team, words, epoch);
  hear_members(g, ctx, team, words, epoch, what);
}

// One member's part of a ring step: `count` elements.
template <class T>
struct RingPart {
  const T* elems;
  std::size_t count;
};

// Copies `len` elements of this PE's memory (group-parallel; complete on return in every thread).
template <class G, class T>
TESSERA_KERNEL_CODE void copy_local(G g, const Context& ctx, T* dst, const T* src,
                                    std::size_t len) {
  if (dst != src && len != 0) put(g, ctx, make_tile(dst, len), make_tile(src, len), ctx.my_pe);
  g.sync();
}

// out[i] = narrow(reduce over members j in rank order of stage_j[i]), i < len, where stage_j is
// `stage` (this PE's staging) translated to member j.
template <ReduceOp Op, class G, class T>
TESSERA_KERNEL_CODE void reduce_members(G g, const Context& ctx, const Team& team, const T* stage,
                                        T* out, std::size_t len) {
  using A = AllReduceAcc<T>;
  constexpr std::size_t kTile = 64;
  const auto step = static_cast<std::size_t>(g.size()) * kTile;
  for (std::size_t base = static_cast<std::size_t>(g.rank()) * kTile; base < len; base += step) {
    const std::size_t n = len - base < kTile ? len - base : kTile;
    A acc[kTile];
    const T* first = ctx.ptr(stage, team.pe(0)) + base;
    for (std::size_t k = 0; k < n; ++k) acc[k] = widen(first[k]);
    for (int j = 1; j < team.size; ++j) {
      const T* src = ctx.ptr(stage, team.pe(j)) + base;
      for (std::size_t k = 0; k < n; ++k) acc[k] = combine<Op>(acc[k], widen(src[k]));
    }
    for (std::size_t k = 0; k < n; ++k) out[base + k] = narrow<T>(acc[k]);
  }
  g.sync();
}

// A team of one: the reduction is the contribution itself.
template <class G, class T>
TESSERA_KERNEL_CODE bool all_reduce_alone(G g, const Context& ctx, const Team& team, T* out,
                                          const T* in, std::size_t count) {
  if (team.size != 1) return false;
  copy_local(g, ctx, out, in, count);
  return true;
}

// Copies this member's contribution into the staging half of `epoch`, announces it and waits
// until every member of the team has announced theirs; returns the staging half, which peers
// then read.
template <class T, class G>
TESSERA_KERNEL_CODE T* stage_and_gather(G g, const Context& ctx, const Team& team,
                                        AllReduceWorkspace ws, std::uint64_t epoch, const T* in,
                                        std::size_t len, const char* what) {
  T* stage = reinterpret_cast<T*>(ws.half(epoch));
  copy_local(g, ctx, stage, in, len);
  announce_and_hear(g, ctx, team, ws.arrived, epoch, what);
  return stage;
}

// The reduce-scatter steps of a ring (group-parallel), in `stage`'s slots `slot` accumulators
// apart: at step k < m - 1 this member adds its part k (part(k) = {elements, count}) to the
// partial sum from its left (nothing at step 0), puts it into slot k of its right's staging and
// raises the right's ring_rs to base + k + 1. Returns the last partial sum from the left (slot
// m - 2 of this member's staging), complete: the caller adds its own part and owns the result.
template <ReduceOp Op, class T, class G, class Part>
TESSERA_KERNEL_CODE const AllReduceAcc<T>* ring_reduce_steps(
    G g, const Context& ctx, const Team& team, AllReduceWorkspace ws, AllReduceAcc<T>* stage,
    std::size_t slot, std::uint64_t base, Part&& part, const char* what) {
  const int r = team.my_rank, m = team.size;
  const int right = team.pe((r + 1) % m), left = team.pe((r + m - 1) % m);
  const auto t = static_cast<std::size_t>(g.rank()), nt = static_cast<std::size_t>(g.size());
  for (int k = 0; k + 1 < m; ++k) {
    const RingPart<T> x = part(k);
    AllReduceAcc<T>* dst = ctx.ptr(stage + static_cast<std::size_t>(k) * slot, right);
    if (k == 0) {
      for (std::size_t i = t; i < x.count; i += nt) dst[i] = widen(x.elems[i]);
    } else {
      device::detail::wait_from(g, ctx, ws.ring_rs, Cmp::ge, base + static_cast<std::uint64_t>(k),
                                left, what);
      const AllReduceAcc<T>* from = stage + static_cast<std::size_t>(k - 1) * slot;
      for (std::size_t i = t; i < x.count; i += nt)
        dst[i] = combine<Op>(from[i], widen(x.elems[i]));
    }
    g.sync();
    if (g.rank() == 0) {
      signal(ctx, ws.ring_rs, base + static_cast<std::uint64_t>(k) + 1, SignalOp::set, right);
    }
  }
  device::detail::wait_from(g, ctx, ws.ring_rs, Cmp::ge, base + static_cast<std::uint64_t>(m - 1),
                            left, what);
  return stage + static_cast<std::size_t>(m - 2) * slot;
}

// Runs body(epoch, off, len) for every segment of `seg` elements of a call on `count` elements:
// segment s covers [off, off + len) and takes epoch first_epoch + s + 1, so a call uses
// ceil(count / seg) epochs (all_reduce_segments, reduce_scatter_segments, ...).
template <class Body>
TESSERA_KERNEL_CODE void for_each_segment_of(std::size_t count, std::size_t seg,
                                             std::uint64_t first_epoch, Body&& body) {
  std::uint64_t epoch = first_epoch;
  for (std::size_t off = 0; off < count; off += seg) {
    body(++epoch, off, count - off < seg ? count - off : seg);
  }
}

// for_each_segment_of with the all-reduce's segments (AllReduceWorkspace::segment_elems).
template <class T, class Body>
TESSERA_KERNEL_CODE void for_each_segment(std::size_t count, std::uint64_t first_epoch,
                                          Body&& body) {
  for_each_segment_of(count, AllReduceWorkspace::segment_elems<T>(), first_epoch,
                      static_cast<Body&&>(body));
}

}  // namespace detail

template <class T, class G>
TESSERA_KERNEL_CODE void all_reduce_one_shot(G g, const Context& ctx, const Team& team,
                                             AllReduceWorkspace ws, T* out, const T* in,
                                             std::size_t count, ReduceOp op,
                                             std::uint64_t first_epoch) {
  if (detail::all_reduce_alone(g, ctx, team, out, in, count)) return;
  detail::for_each_segment<T>(
      count, first_epoch, [&](std::uint64_t epoch, std::size_t off, std::size_t len) {
        T* stage =
            detail::stage_and_gather(g, ctx, team, ws, epoch, in + off, len,
                                     "all_reduce_one_shot waiting for a member's contribution");
        detail::with_op(op, [&](auto o) {
          detail::reduce_members<decltype(o)::value>(g, ctx, team, static_cast<const T*>(stage),
                                                     out + off, len);
        });
      });
}

template <class T, class G>
TESSERA_KERNEL_CODE void all_reduce_two_shot(G g, const Context& ctx, const Team& team,
                                             AllReduceWorkspace ws, T* out, const T* in,
                                             std::size_t count, ReduceOp op,
                                             std::uint64_t first_epoch) {
  if (detail::all_reduce_alone(g, ctx, team, out, in, count)) return;
  const int r = team.my_rank, m = team.size;
  detail::for_each_segment<T>(
      count, first_epoch, [&](std::uint64_t epoch, std::size_t off, std::size_t len) {
        T* stage =
            detail::stage_and_gather(g, ctx, team, ws, epoch, in + off, len,
                                     "all_reduce_two_shot waiting for a member's contribution");
        // Reduce-scatter: this member's chunk, from every member's staging.
        const detail::ChunkBounds mine = detail::chunk_of(len, m, r);
        T* chunk = out + off + mine.begin;
        const std::size_t chunk_len = mine.end - mine.begin;
        detail::with_op(op, [&](auto o) {
          detail::reduce_members<decltype(o)::value>(
              g, ctx, team, static_cast<const T*>(stage + mine.begin), chunk, chunk_len);
        });
        // All-gather: the reduced chunk into every member's out (which entered this epoch).
        for (int k = 1; k < m; ++k) {
          const int to = team.pe((r + k) % m);
          if (chunk_len != 0) {
            put_signal(g, ctx, make_tile(chunk, chunk_len),
                       make_tile(static_cast<const T*>(chunk), chunk_len), &ws.done[r], epoch,
                       SignalOp::set, to);
          } else if (g.rank() == 0) {
            signal(ctx, &ws.done[r], epoch, SignalOp::set, to);
          }
        }
        detail::hear_members(g, ctx, team, ws.done, epoch,
                             "all_reduce_two_shot waiting for a member's reduced chunk");
      });
}

template <class T, class G>
TESSERA_KERNEL_CODE void all_reduce_ring(G g, const Context& ctx, const Team& team,
                                         AllReduceWorkspace ws, T* out, const T* in,
                                         std::size_t count, ReduceOp op,
                                         std::uint64_t first_epoch) {
  if (detail::all_reduce_alone(g, ctx, team, out, in, count)) return;
  using A = AllReduceAcc<T>;
  const int r = team.my_rank, m = team.size;
  const int right = team.pe((r + 1) % m), left = team.pe((r + m - 1) % m);
  const auto t = static_cast<std::size_t>(g.rank()), nt = static_cast<std::size_t>(g.size());
  detail::for_each_segment<T>(
      count, first_epoch, [&](std::uint64_t epoch, std::size_t off, std::size_t len) {
        const std::size_t cap =
            (len + static_cast<std::size_t>(m) - 1) / static_cast<std::size_t>(m);
        A* stage = reinterpret_cast<A*>(ws.half(epoch));
        const T* x = in + off;
        T* y = out + off;
        T* right_y = ctx.ptr(y, right);
        // Counter values of this epoch: above every value of earlier epochs.
        const std::uint64_t base = (epoch - 1) * static_cast<std::uint64_t>(m);
        detail::with_op(op, [&](auto o) {
          constexpr ReduceOp kOp = decltype(o)::value;
          // Reduce-scatter: at step k, chunk r - k (started by member r - k) moves right, with this
          // member's contribution added; the partial sums are accumulators in the right's staging.
          // The last partial sum to arrive completes chunk r + 1, which this member owns.
          const A* last = detail::ring_reduce_steps<kOp, T>(
              g, ctx, team, ws, stage, cap, base,
              [&](int k) {
                const detail::ChunkBounds c = detail::chunk_of(len, m, (r - k + m) % m);
                return detail::RingPart<T>{x + c.begin, c.end - c.begin};
              },
              "all_reduce_ring waiting for a partial sum from the left");
          const detail::ChunkBounds own = detail::chunk_of(len, m, (r + 1) % m);
          for (std::size_t i = t; i < own.end - own.begin; i += nt) {
            const T v =
                detail::narrow<T>(detail::combine<kOp>(last[i], detail::widen(x[own.begin + i])));
            y[own.begin + i] = v;
            right_y[own.begin + i] = v;
          }
        });
        g.sync();
        if (g.rank() == 0) signal(ctx, ws.ring_ag, base + 1, SignalOp::set, right);
        // All-gather: forward each reduced chunk that arrives from the left, except the last one.
        for (int k = 1; k + 1 < m; ++k) {
          device::detail::wait_from(g, ctx, ws.ring_ag, Cmp::ge,
                                    base + static_cast<std::uint64_t>(k), left,
                                    "all_reduce_ring waiting for a reduced chunk from the left");
          const detail::ChunkBounds c = detail::chunk_of(len, m, (r + 1 - k + m) % m);
          for (std::size_t i = c.begin + t; i < c.end; i += nt) right_y[i] = y[i];
          g.sync();
          if (g.rank() == 0) {
            signal(ctx, ws.ring_ag, base + static_cast<std::uint64_t>(k) + 1, SignalOp::set, right);
          }
        }
        device::detail::wait_from(g, ctx, ws.ring_ag, Cmp::ge,
                                  base + static_cast<std::uint64_t>(m - 1), left,
                                  "all_reduce_ring waiting for a reduced chunk from the left");
      });
}

template <class T, class G>
TESSERA_KERNEL_CODE void all_reduce_atomic(G g, const Context& ctx, const Team& team,
                                           AllReduceWorkspace ws, T* out, const T* in,
                                           std::size_t count, std::uint64_t first_epoch) {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, std::int32_t> ||
                    std::is_same_v<T, std::int64_t>,
                "all_reduce_atomic adds int32, int64 or fp32");
  if (detail::all_reduce_alone(g, ctx, team, out, in, count)) return;
  const int r = team.my_rank, m = team.size;
  const auto t = static_cast<std::size_t>(g.rank()), nt = static_cast<std::size_t>(g.size());
  detail::for_each_segment<T>(
      count, first_epoch, [&](std::uint64_t epoch, std::size_t off, std::size_t len) {
        // In place, `in` is the `out` peers add into: read the contribution from a private copy.
        T* stage = reinterpret_cast<T*>(ws.half(epoch));
        detail::copy_local(g, ctx, stage, in + off, len);
        detail::copy_local(g, ctx, out + off, in + off, len);
        detail::announce_and_hear(g, ctx, team, ws.arrived, epoch,
                                  "all_reduce_atomic waiting for a member to enter");
        for (int k = 1; k < m; ++k) {
          T* dst = ctx.ptr(out + off, team.pe((r + k) % m));
          for (std::size_t i = t; i < len; i += nt) {
            platform::atomic_fetch_add(dst + i, stage[i], Sem::relaxed, Scope::system);
          }
        }
        g.sync();
        detail::announce_and_hear(g, ctx, team, ws.done, epoch,
                                  "all_reduce_atomic waiting for a member's additions");
      });
}

}  // namespace tessera::device::ops
