// Bodies of ops/all_to_all.hpp.
//
// all_to_all: `arrived[j]` on a sender says up to which epoch member j's `out` may be written
// (an out-of-place member releases the whole call on entry, an in-place one each segment once it
// is staged); `done[s]` on a receiver says up to which epoch sender s's blocks are in. Staging is
// only ever read by its owner. all_to_all_v: each member's row of the count matrix travels with
// its arrived signal into the staging half of the epoch, which every member has left since its
// last use (every member hears from every member in each epoch: all_reduce_funcs.hpp).
#pragma once

#include <cstddef>
#include <cstdint>

#include "tessera/device/failure.hpp"
#include "tessera/device/impl/signal_funcs.hpp"
#include "tessera/device/ops/all_to_all.hpp"
#include "tessera/device/ops/impl/all_reduce_funcs.hpp"
#include "tessera/device/rma.hpp"
#include "tessera/device/signal.hpp"
#include "tessera/device/tile.hpp"

namespace tessera::device::ops {

template <class T, class G>
TESSERA_KERNEL_CODE void all_to_all(G g, const Context& ctx, const Team& team,
                                    AllReduceWorkspace ws, T* out, const T* in, std::size_t count,
                                    std::uint64_t first_epoch) {
  const int r = team.my_rank, m = team.size;
  const auto rz = static_cast<std::size_t>(r);
  const bool in_place = static_cast<const T*>(out) == in;
  const std::size_t seg = all_to_all_segment_elems<T>(m);
  const std::uint64_t segments = all_to_all_segments<T>(count, m);
  const std::uint64_t last = first_epoch + segments;
  // Out of place, nothing of `out` is still needed: peers may write the whole call now.
  if (!in_place && g.rank() == 0) detail::tell_members(ctx, team, ws.arrived, last);
  for (std::uint64_t s = 0; s < segments; ++s) {
    const std::uint64_t epoch = first_epoch + s + 1;
    const std::size_t off = static_cast<std::size_t>(s) * seg;
    const std::size_t len = count - off < seg ? count - off : seg;
    // Where this member's segment of block j is read from: `in`, or its staged copy.
    const T* from = in + off;
    std::size_t stride = count;
    if (in_place) {
      T* stage = reinterpret_cast<T*>(ws.half(epoch));
      for (int j = 0; j < m; ++j) {
        if (j == r) continue;  // block r stays where it is
        const auto jz = static_cast<std::size_t>(j);
        detail::copy_local(g, ctx, stage + jz * len, in + jz * count + off, len);
      }
      if (g.rank() == 0) detail::tell_members(ctx, team, ws.arrived, epoch);
      from = stage;
      stride = len;
    } else {
      detail::copy_local(g, ctx, out + rz * count + off, in + rz * count + off, len);
    }
    for (int k = 1; k < m; ++k) {
      const int j = (r + k) % m;
      const auto jz = static_cast<std::size_t>(j);
      device::detail::wait_from(g, ctx, &ws.arrived[j], Cmp::ge, epoch, team.pe(j),
                                "all_to_all waiting for a member to free its recv");
      put_signal(g, ctx, make_tile(out + rz * count + off, len), make_tile(from + jz * stride, len),
                 &ws.done[r], epoch, SignalOp::set, team.pe(j));
    }
  }
  detail::hear_members(g, ctx, team, ws.done, last, "all_to_all waiting for a member's block");
}

namespace detail {

// Builds, identically on every member, the failure of an all_to_all_v whose blocks exceed a
// member's capacity from the count matrix `rows` (row s: capacity of s, then its counts); false
// when every member's blocks fit.
TESSERA_HOST_DEVICE inline bool all_to_all_v_overflow(const Team& team, const std::uint64_t* rows,
                                                      device::detail::Message& m) {
  const auto w = static_cast<std::size_t>(team.size) + 1;
  for (int q = 0; q < team.size; ++q) {
    std::uint64_t total = 0;
    for (int s = 0; s < team.size; ++s) total += rows[static_cast<std::size_t>(s) * w + 1 + q];
    const std::uint64_t capacity = rows[static_cast<std::size_t>(q) * w];
    if (total <= capacity) continue;
    m << "all_to_all_v: PE " << team.pe(q) << " would receive " << total
      << " elements, more than its recv_capacity of " << capacity << " (from";
    for (int s = 0; s < team.size && s < 16; ++s) {
      m << " PE " << team.pe(s) << ": " << rows[static_cast<std::size_t>(s) * w + 1 + q]
        << (s + 1 < team.size ? "," : "");
    }
    m << (team.size > 16 ? " ...)" : ")");
    return true;
  }
  return false;
}

}  // namespace detail

template <class T, class G>
TESSERA_KERNEL_CODE void all_to_all_v(G g, const Context& ctx, const Team& team,
                                      AllReduceWorkspace ws, T* out, std::size_t out_capacity,
                                      const T* in, const std::size_t* send_counts,
                                      std::size_t* recv_counts, std::size_t* recv_offsets,
                                      std::uint64_t epoch) {
  const int r = team.my_rank, m = team.size;
  const auto mz = static_cast<std::size_t>(m), w = mz + 1;
  auto* rows = reinterpret_cast<std::uint64_t*>(ws.half(epoch));
  std::uint64_t* mine = rows + static_cast<std::size_t>(r) * w;
  if (g.rank() == 0) {
    mine[0] = out_capacity;
    for (std::size_t j = 0; j < mz; ++j) mine[1 + j] = send_counts[j];
  }
  g.sync();
  for (int k = 1; k < m; ++k) {
    put_signal(g, ctx, make_tile(mine, w), make_tile(static_cast<const std::uint64_t*>(mine), w),
               &ws.arrived[r], epoch, SignalOp::set, team.pe((r + k) % m));
  }
  detail::hear_members(g, ctx, team, ws.arrived, epoch,
                       "all_to_all_v waiting for a member's counts");
  device::detail::Message message;
  if (detail::all_to_all_v_overflow(team, rows, message)) {
    // Every member reaches the same verdict; all of them have heard from all in this epoch, so
    // the team stays usable for the next call.
    if (g.rank() == 0) platform::report_failure(FailureCode::invalid_argument, message.c_str());
    return;
  }
  if (g.rank() == 0) {
    std::size_t at = 0;
    for (std::size_t s = 0; s < mz; ++s) {
      recv_counts[s] = static_cast<std::size_t>(rows[s * w + 1 + static_cast<std::size_t>(r)]);
      recv_offsets[s] = at;
      at += recv_counts[s];
    }
  }
  // This member's block for j: after its blocks for 0 .. j - 1 in `in`; after the blocks of
  // members 0 .. r - 1 in j's `out` (the counts as published in this epoch's row).
  for (int k = 0; k < m; ++k) {
    const int j = (r + k) % m;
    const auto jz = static_cast<std::size_t>(j);
    std::size_t src = 0, dst = 0;
    for (std::size_t i = 0; i < jz; ++i) src += static_cast<std::size_t>(mine[1 + i]);
    for (std::size_t s = 0; s < static_cast<std::size_t>(r); ++s)
      dst += static_cast<std::size_t>(rows[s * w + 1 + jz]);
    const auto len = static_cast<std::size_t>(mine[1 + jz]);
    if (k == 0) {
      detail::copy_local(g, ctx, out + dst, in + src, len);
    } else if (len != 0) {
      put_signal(g, ctx, make_tile(out + dst, len), make_tile(in + src, len), &ws.done[r], epoch,
                 SignalOp::set, team.pe(j));
    } else if (g.rank() == 0) {
      signal(ctx, &ws.done[r], epoch, SignalOp::set, team.pe(j));
    }
  }
  detail::hear_members(g, ctx, team, ws.done, epoch, "all_to_all_v waiting for a member's block");
}

}  // namespace tessera::device::ops
