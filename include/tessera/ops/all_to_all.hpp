// tessera::ops::all_to_all and all_to_all_v: every member of a Team sends one block to every
// member (equal counts, or counts per peer exchanged on the device). The block-level building
// blocks live in <tessera/device/ops/all_to_all.hpp> (namespace tessera::device::ops).
#pragma once

#include <cstddef>

#include "tessera/device/ops/all_to_all.hpp"
#include "tessera/ops/all_reduce.hpp"
#include "tessera/runtime.hpp"
#include "tessera/stream.hpp"
#include "tessera/team.hpp"

namespace tessera::ops {

// Collective over the members of `team`, stream-ordered: `send` holds team.size * count elements
// of `dtype` (this PE's memory, any kind), block r for rank r; `recv` (a symmetric heap block of
// at least team.size * count elements) receives block r from rank r. Peers write this PE's recv
// only after its stream has entered the call. In place: send == recv (each member may choose; the
// call stages the segments it overwrites); otherwise they may not overlap. Once the stream reaches
// the end of the call recv holds every block and send is reusable. Any count works.
//
// Agreement, epochs, ordering and capture as for reduce_scatter (<tessera/ops/reduce_scatter.hpp>).
// Throws Error(invalid_argument) when this PE is not a member or the team has no workspace,
// count is 0, send is null, recv is not in a live heap block of team.size * count elements or
// partly overlaps send, a member is not load/store reachable, or (team spanning the job, first
// call) the PEs make different calls.
void all_to_all(Runtime& rt, Stream& stream, const Team& team, const void* send, void* recv,
                std::size_t count, Dtype dtype);

// Collective over the members of `team`, stream-ordered, counts per peer: `send` holds
// send_counts[r] elements for rank r, packed in rank order (send_counts: team.size entries, any
// memory, read when the stream runs the call); `recv` (a symmetric heap block of at least
// recv_capacity elements) receives the blocks packed in source-rank order, and recv_counts[s],
// recv_offsets[s] (this PE's memory, team.size entries each, written by the call) say how many
// elements came from rank s and where they start. The counts are exchanged on the stream, with
// every member's recv_capacity: when the blocks for some member exceed its capacity nothing is
// sent and synchronize throws Error(invalid_argument) on every member, naming that member, its
// capacity and the count from each sender (never a silent drop; the team stays usable). send and
// recv may not overlap. Teams of up to device::ops::all_to_all_v_max_team members.
//
// Agreement (dtype and recv only: counts differ), epochs, ordering and capture as for
// reduce_scatter; an overflow found during a replay is reported by the next synchronize().
// Throws Error(invalid_argument) when this PE is not a member or the team has no workspace or too
// many members, send, send_counts, recv_counts or recv_offsets is null, recv is not in a live heap
// block of recv_capacity elements or overlaps send, or (team spanning the job, first call) the PEs
// make different calls.
void all_to_all_v(Runtime& rt, Stream& stream, const Team& team, const void* send,
                  const std::size_t* send_counts, void* recv, std::size_t recv_capacity,
                  std::size_t* recv_counts, std::size_t* recv_offsets, Dtype dtype);

}  // namespace tessera::ops
