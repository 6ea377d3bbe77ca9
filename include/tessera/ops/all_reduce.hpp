// tessera::ops::all_reduce: every member of a Team contributes `count` elements and every member
// receives their element-wise reduction. The block-level building blocks it runs (one-shot,
// two-shot, ring, atomic) live in <tessera/device/ops/all_reduce.hpp> (namespace
// tessera::device::ops) for use inside user kernels.
#pragma once

#include <cstddef>

#include "tessera/device/ops/all_reduce.hpp"
#include "tessera/runtime.hpp"
#include "tessera/stream.hpp"
#include "tessera/team.hpp"

namespace tessera::ops {

// Element types of the reductions. f16 and bf16 are reduced in fp32 and rounded once.
enum class Dtype { f32, bf16, f16, i32, i64 };
using device::ops::ReduceOp;

enum class AllReduceAlgo {
  automatic,  // TESSERA_ALLREDUCE_ALGO if set, else by size (resolve_all_reduce_algo)
  one_shot,   // every member reads every member's staged contribution: one hop, lowest latency
  two_shot,   // reduce-scatter of chunks, then all-gather of the reduced chunks: least traffic
  ring,       // both phases around the ring: each member talks to its right neighbour only
  atomic,     // remote atomic adds into every member's recv: sum of i32, i64 (and f32 where the
              // platform has float atomics, device::platform::kFloatAtomicAdd)
};

// "f32", "bf16", "f16", "i32", "i64".
const char* to_string(Dtype dtype) noexcept;
// "sum", "max", "min", "prod".
const char* to_string(ReduceOp op) noexcept;
// "automatic", "one_shot", "two_shot", "ring", "atomic".
const char* to_string(AllReduceAlgo algo) noexcept;
// Bytes of one element.
std::size_t size_of(Dtype dtype) noexcept;

// The sizes (bytes per member) at which `automatic` switches from one-shot to two-shot and from
// two-shot to the ring, measured on the host backend with 2 and 4 PEs (docs/perf/earlier-runs.md,
// "all_reduce"): below a few KiB every algorithm costs the launch and one round of signals, and
// one-shot has the fewest steps; from there two-shot moves less; from about half a MiB the ring's
// pipeline of neighbour-only steps touches the least memory at once and wins by 1.3-1.6x.
inline constexpr std::size_t kAllReduceTwoShotThreshold = std::size_t{8} << 10;
// With a team of two, two-shot wins from 2 KiB: one-shot's one step saves a signal, but each PE
// then reads the peer's whole buffer where two-shot reads half (2 PEs under mpirun: 4 KiB one-shot
// 1.03 us, two-shot 0.82 us; 8 KiB 1.60 against 1.04 us; 1 KiB even).
inline constexpr std::size_t kAllReduceTwoShotThresholdOfTwo = std::size_t{2} << 10;
inline constexpr std::size_t kAllReduceRingThreshold = std::size_t{512} << 10;

// The algorithm `automatic` resolves to for `count` elements of `dtype` on a team of `team_size`
// (reads TESSERA_ALLREDUCE_ALGO=one_shot|two_shot|ring|atomic|auto; throws
// Error(invalid_argument) on another value).
AllReduceAlgo resolve_all_reduce_algo(std::size_t count, Dtype dtype, int team_size,
                                      AllReduceAlgo algo = AllReduceAlgo::automatic);

// Collective over the members of `team`, stream-ordered: enqueues on `stream` the reduction
// with `op` of every member's `count` elements of `dtype` at `send` (this PE's memory, any kind;
// may equal recv: in place) into `recv` (a symmetric heap block of at least count elements, at
// the same heap offset on every member: two-shot, ring and atomic write into it from peers).
// Once the stream reaches the end of the call recv holds the result and send is reusable; until
// then both must stay valid. Peers write this PE's recv for a call only after its stream has
// entered that call, so recv may be read freely between calls. Any count works (1, 7, ...).
//
// Every member makes the same sequence of calls on the team with the same count, dtype, op and
// algorithm (after `automatic` resolves), in stream order; keep a team's calls on one stream (two
// calls on one team running at once would share its staging). The first call on a (recv, count,
// dtype, op, algorithm) combination checks that every member makes the same call: on a team
// spanning the whole job collectively on the host (this call throws), on any other team on the
// stream (synchronize throws; make a new team after that); later calls only enqueue work. Calls
// never reset anything (the team's epochs, shared with the team's other collectives).
//
// Capture (Stream::begin_capture, docs/graphs.md): every algorithm keeps its epochs in the team's
// workspace and advances them on the device, so a captured call replays correctly. On a team
// spanning the job the first call of a combination cannot be captured (its host agreement
// check): during a capture it throws Error(invalid_argument) ("all_reduce: cannot be captured:
// ... make the same call once before begin_capture") and enqueues nothing. On any other team the
// first call's check runs on the stream, so it is captured and every replay checks again.
//
// Throws Error(invalid_argument) when this PE is not a member or the team has no workspace (not
// made by a team maker), count is 0, send is null, recv is not inside a live symmetric heap block
// of count elements, op is prod on a floating dtype, atomic is asked for another op than sum or
// for a 16-bit dtype, a member's heap is not load/store reachable from this PE, or (first call)
// the PEs make different calls: the message names both.
void all_reduce(Runtime& rt, Stream& stream, const Team& team, const void* send, void* recv,
                std::size_t count, Dtype dtype, ReduceOp op,
                AllReduceAlgo algo = AllReduceAlgo::automatic);

}  // namespace tessera::ops
