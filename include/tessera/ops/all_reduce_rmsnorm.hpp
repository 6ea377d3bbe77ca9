// tessera::ops::all_reduce_rmsnorm: y = rmsnorm(all_reduce(x) + residual) * weight, the epilogue
// of a tensor-parallel transformer layer. The fused kernel is made of the building block in
// <tessera/device/ops/rmsnorm.hpp> (device/), which user kernels can call themselves.
#pragma once

#include <cstddef>

#include "tessera/ops/all_reduce.hpp"
#include "tessera/ops/overlap.hpp"
#include "tessera/runtime.hpp"
#include "tessera/stream.hpp"
#include "tessera/team.hpp"

namespace tessera::ops {

// Collective over the members of `team`, stream-ordered: every member contributes x (rows x
// hidden elements of dtype, this PE's memory, any kind); each member's y (rows x hidden, any
// memory, may equal x or residual) receives, row by row, v / sqrt(mean(v^2) + eps) * weight with
// v = sum over members of x + residual (residual: rows x hidden, weight: hidden, both this PE's
// memory). Math in fp32, rounded once into y. Patterns:
//   bulk_synchronous  ops::all_reduce of x into a symmetric workspace, then the norm kernel;
//   fused_sequential  one kernel: each block stages its rows, waits for the members' copies of
//                     them, and sums, adds, normalises and writes them.
//   automatic         resolve_overlap(OpKind::all_reduce_rmsnorm, rows, hidden, size_of(dtype)).
// Every member makes the same calls on the team, in stream order (like all_reduce); no reset.
// Capture (Stream::begin_capture): a call on a shape (rows, hidden, dtype, pattern) already used
// is captured and replays correctly (fused_sequential numbers its calls on the device;
// bulk_synchronous is as capturable as its all_reduce); the first call on a shape allocates its
// workspace collectively, so during a capture it throws Error(invalid_argument)
// ("all_reduce_rmsnorm: cannot be captured: ...").
// Throws Error(invalid_argument) on dtype i32 or i64, rows or hidden 0, a null pointer, eps not
// positive, a pattern that does not apply ("all_reduce_rmsnorm: pattern producer_consumer does
// not apply ..."), this PE not a member, or a member's heap not load/store reachable.
void all_reduce_rmsnorm(Runtime& rt, Stream& stream, const Team& team, const void* x,
                        const void* residual, const void* weight, void* y, std::size_t rows,
                        std::size_t hidden, Dtype dtype, float eps = 1e-6f,
                        OverlapPattern pattern = OverlapPattern::automatic);

}  // namespace tessera::ops
