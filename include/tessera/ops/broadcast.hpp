// tessera::ops::broadcast: the root member's elements reach every member of a Team. The
// block-level building block lives in <tessera/device/ops/broadcast.hpp> (namespace
// tessera::device::ops).
#pragma once

#include <cstddef>

#include "tessera/device/ops/broadcast.hpp"
#include "tessera/ops/all_reduce.hpp"
#include "tessera/runtime.hpp"
#include "tessera/stream.hpp"
#include "tessera/team.hpp"

namespace tessera::ops {

// Collective over the members of `team`, stream-ordered: `root` is a team rank; `send` holds the
// root's `count` elements of `dtype` (this PE's memory, any kind; ignored on other members, may
// be null there; may equal recv on the root: in place); `recv` (a symmetric heap block of at least
// count elements) receives them on every member. Members copy the root's send straight from the
// heap when it lies there (send == recv on the root, or any heap buffer: one copy on each
// member's critical path, the fastest), else the root's recv, chunk by chunk as the root fills
// it; the root writes its recv for the next call only after every member finished reading. Once
// the stream reaches the end of the call recv holds the data on every member and
// send is reusable. Any count works.
//
// Agreement (count, dtype, root, recv), epochs, ordering and capture as for reduce_scatter
// (<tessera/ops/reduce_scatter.hpp>). Throws Error(invalid_argument) when this PE is not a member
// or the team has no workspace, count is 0, root is not a team rank, send is null on the root,
// recv is not in a live heap block of count elements (or partly overlaps send on the root), a
// member is not load/store reachable, or (team spanning the job, first call) the PEs make
// different calls.
void broadcast(Runtime& rt, Stream& stream, const Team& team, const void* send, void* recv,
               std::size_t count, Dtype dtype, int root);

}  // namespace tessera::ops
