// The overlap taxonomy of the fused ops (DESIGN §7): how an op's GEMM and its communication share
// the device in time. Every fused op (ag_gemm, gemm_rs, gemm_ar, gemm_as, all_reduce_rmsnorm)
// takes an OverlapPattern and, where it has a choice, a CommDirection; `automatic` resolves by
// resolve_overlap below, which tessera-bench taxonomy prints next to its measurements.
#pragma once

#include <cstddef>
#include <string_view>

namespace tessera::ops {

enum class OverlapPattern {
  automatic,              // resolve_overlap's rule
  bulk_synchronous,       // the GEMM kernel, then the library collective's kernel, one stream
  producer_consumer,      // GEMM and communication kernels on two streams, tiles handed over by
                          // flags; the caller's stream waits for both
  workgroup_specialized,  // one kernel: comm_blocks blocks communicate, the rest compute
  fused_sequential,       // one kernel: each block communicates its own tile right after it
};

// Who moves the bytes of a tile. push: the producer writes into the consumer's heap (works over
// any transport). pull: the consumer reads the producer's heap in place (every peer mapped).
// automatic: pull when every peer is mapped, else push.
enum class CommDirection { automatic, push, pull };

// The fused ops, as resolve_overlap tells them apart.
enum class OpKind { ag_gemm, gemm_rs, gemm_ar, gemm_as, all_reduce_rmsnorm };

// "automatic", "bulk_synchronous", "producer_consumer", "workgroup_specialized",
// "fused_sequential".
const char* to_string(OverlapPattern pattern) noexcept;
// "automatic", "push", "pull".
const char* to_string(CommDirection direction) noexcept;
// "ag_gemm", "gemm_rs", "gemm_ar", "gemm_as", "all_reduce_rmsnorm".
const char* to_string(OpKind op) noexcept;

// Parses "bulk_synchronous", "producer_consumer", "workgroup_specialized", "fused_sequential",
// "auto" or "automatic". Throws Error(invalid_argument) naming the accepted values otherwise.
OverlapPattern overlap_pattern_from_string(std::string_view name);
// Parses "push", "pull", "auto" or "automatic"; throws Error(invalid_argument) otherwise.
CommDirection comm_direction_from_string(std::string_view name);

// True when `op` can run as `pattern` (automatic: always). all_reduce_rmsnorm runs only
// bulk_synchronous and fused_sequential; every GEMM op runs all four.
bool overlap_applies(OpKind op, OverlapPattern pattern) noexcept;

// Fused ops whose GEMM does fewer multiply-adds than this (m * n * k summed over the job) run
// bulk-synchronous under `automatic`: below it the kernels are too short for the flag handshakes
// of the fused patterns to pay (provisional, before tessera-bench taxonomy measures it).
inline constexpr double kFusionThresholdMacs = 16.0 * 1024 * 1024;
// all_reduce_rmsnorm fuses below this many bytes of x per PE (one kernel saves a launch and a
// pass over the rows; above it the all_reduce algorithms that move less win).
inline constexpr std::size_t kRmsnormFusionMaxBytes = std::size_t{256} << 10;

// The pattern `automatic` picks for `op` on an m x n x k problem (the op's own shape arguments in
// the order its constructor takes them; all_reduce_rmsnorm: m = rows, n = hidden, k = bytes per
// element) over n_pes PEs, all_mapped telling whether every peer's heap is load/store reachable.
// Provisional rule, documented in docs/performance.md until measured:
//   ag_gemm                       workgroup_specialized (its kernel before patterns existed);
//   gemm_rs                       fused_sequential (likewise), at any PE count;
//   one PE (the others)           bulk_synchronous (nothing to overlap);
//   all_reduce_rmsnorm            fused_sequential up to kRmsnormFusionMaxBytes of x, else
//                                 bulk_synchronous;
//   gemm_ar, gemm_as              bulk_synchronous below kFusionThresholdMacs, else
//                                 fused_sequential (gemm_ar: every block owns the reduction of
//                                 its tiles) / workgroup_specialized (gemm_as: the scatter is a
//                                 pure copy a few blocks keep up with).
// Never returns automatic. all_mapped is taken for the rule's later, measured form (the pull
// direction and the fused patterns are cheaper when peers are mapped).
OverlapPattern resolve_overlap(OpKind op, std::size_t m, std::size_t n, std::size_t k, int n_pes,
                               bool all_mapped) noexcept;

// The direction `automatic` resolves to: pull when every peer is mapped, else push; a direction
// given explicitly is returned unchanged. bulk_synchronous has none of its own (the collective
// picks its algorithm) and resolves to automatic.
CommDirection resolve_direction(OverlapPattern pattern, CommDirection direction,
                                bool all_mapped) noexcept;

}  // namespace tessera::ops
