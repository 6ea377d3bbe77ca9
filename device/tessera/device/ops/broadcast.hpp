// Broadcast building block on a Team: the root member's `count` elements end in every member's
// `out`. Called by exactly one group per member PE, every member making the same sequence of
// calls on the team with the same count, element type and root (a team rank). `in` is read on the
// root only (local memory of any kind; may equal out: in place); `out` is symmetric (members read
// the root's). Every member must be load/store reachable (mapped) from the root.
//
// Pull: when the root's `in` lies in the symmetric heap (in place, or any heap buffer), every
// member copies it straight from there while the root copies it into its own `out`: one copy on
// each member's critical path. Otherwise the root copies `in` into its `out` in chunks of
// kBroadcastChunkBytes, signalling each, and members copy each chunk out of the root's `out` as
// it is signalled. The call ends with every member telling every member it is done (signals
// `arrived` and `done`, and one word of staging, of the team's AllReduceWorkspace; chunk c of a
// call uses epoch first_epoch + c + 1, broadcast_segments epochs in all).
//
// What becomes visible when: on return `out` holds the root's data on every member and the
// root's `in` is reusable; the root overwrites its `out` for call n + 1 only after every member
// has finished reading it for call n, and members only ever write their own `out`.
#pragma once

#include <cstddef>
#include <cstdint>

#include "tessera/device/context.hpp"
#include "tessera/device/ops/all_reduce.hpp"
#include "tessera/device/team.hpp"

namespace tessera::device::ops {

// Bytes the root copies and signals at a time: small enough that members start reading early,
// large enough that a signal per chunk costs nothing next to the copy.
inline constexpr std::size_t kBroadcastChunkBytes = std::size_t{512} << 10;

// Elements of T one chunk carries.
template <class T>
TESSERA_HOST_DEVICE constexpr std::size_t broadcast_chunk_elems() {
  return kBroadcastChunkBytes / sizeof(T);
}

// Chunks (hence epochs) one call of `count` elements uses.
template <class T>
TESSERA_HOST_DEVICE constexpr std::uint64_t broadcast_segments(std::size_t count) {
  const std::size_t chunk = broadcast_chunk_elems<T>();
  return count == 0 ? 0 : (count + chunk - 1) / chunk;
}

// The broadcast from team rank `root`.
template <class T, class G>
TESSERA_KERNEL_CODE void broadcast(G g, const Context& ctx, const Team& team, AllReduceWorkspace ws,
                                   T* out, const T* in, std::size_t count, int root,
                                   std::uint64_t first_epoch);

}  // namespace tessera::device::ops

#include "tessera/device/ops/impl/broadcast_funcs.hpp"
