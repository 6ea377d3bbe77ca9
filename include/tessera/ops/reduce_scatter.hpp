// tessera::ops::reduce_scatter: every member of a Team contributes team.size blocks of `count`
// elements and member r receives the element-wise reduction of every member's block r. The
// block-level building blocks it runs (one-shot, ring) live in
// <tessera/device/ops/reduce_scatter.hpp> (namespace tessera::device::ops).
#pragma once

#include <cstddef>

#include "tessera/device/ops/reduce_scatter.hpp"
#include "tessera/ops/all_reduce.hpp"
#include "tessera/runtime.hpp"
#include "tessera/stream.hpp"
#include "tessera/team.hpp"

namespace tessera::ops {

enum class ReduceScatterAlgo {
  automatic,  // TESSERA_REDUCESCATTER_ALGO if set, else by size (resolve_reduce_scatter_algo)
  one_shot,   // each member reads its block from every member's staging: one hop
  ring,       // each block travels once around the ring: neighbour-only writes
};

// "automatic", "one_shot", "ring".
const char* to_string(ReduceScatterAlgo algo) noexcept;

// The block size (bytes per member's block) from which `automatic` picks the ring, measured on the
// host backend with 2 and 4 PEs (docs/perf/earlier-runs.md, two noisy runs): from 512 KiB blocks
// the ring is as fast as one_shot or up to 2.1x faster (neighbour-only writes, pipelined); below it
// one_shot's single hop is as fast or faster (up to 2x at 32 KiB blocks).
inline constexpr std::size_t kReduceScatterRingThreshold = std::size_t{512} << 10;

// The algorithm `automatic` resolves to for blocks of `count` elements of `dtype` on a team of
// `team_size` (reads TESSERA_REDUCESCATTER_ALGO=one_shot|ring|auto; throws
// Error(invalid_argument) on another value).
ReduceScatterAlgo resolve_reduce_scatter_algo(
    std::size_t count, Dtype dtype, int team_size,
    ReduceScatterAlgo algo = ReduceScatterAlgo::automatic);

// Collective over the members of `team`, stream-ordered: enqueues on `stream` the reduction with
// `op` over every member of its block my_rank: `send` holds team.size * count elements of `dtype`
// (this PE's memory, any kind), block r for rank r; `recv` (a symmetric heap block of at least
// count elements) receives count elements. In place: recv == send + my_rank * count (send then in
// the heap); recv may not overlap send otherwise. Once the stream reaches the end of the call recv
// holds the result and send is reusable; until then both must stay valid. Any count works.
//
// Every member makes the same sequence of calls on the team with the same count, dtype, op and
// algorithm (after `automatic` resolves), in stream order, one stream per team; calls on one team
// share its epochs with every other collective on it and never reset anything. The first call of a
// combination is checked for agreement: on a team spanning the job collectively on the host (this
// call throws), on any other team on the stream (synchronize throws). Either error names both
// calls; after a mismatch on the stream, make a new team (members may have reserved different
// epochs).
//
// Capture as for all_reduce (<tessera/ops/all_reduce.hpp>): later calls replay correctly, the
// first call of a combination on a team spanning the job refuses the capture.
//
// Throws Error(invalid_argument) when this PE is not a member or the team has no workspace,
// count is 0, send is null, recv is not inside a live symmetric heap block of count elements or
// overlaps send other than in place, op is prod on a floating dtype, a member's heap is not
// load/store reachable, or (team spanning the job, first call) the PEs make different calls.
void reduce_scatter(Runtime& rt, Stream& stream, const Team& team, const void* send, void* recv,
                    std::size_t count, Dtype dtype, ReduceOp op,
                    ReduceScatterAlgo algo = ReduceScatterAlgo::automatic);

}  // namespace tessera::ops
