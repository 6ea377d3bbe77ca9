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

// Fused ops whose GEMM does fewer multiply-adds than this (m * n * k over the whole job) run
// bulk-synchronous under `automatic`: the fusion threshold. Measured by tessera-bench taxonomy
// (docs/perf/earlier-runs.md, "taxonomy"): from 128^3 up the fused patterns beat
// bulk-synchronous at 4 PEs by 1.15-1.88x, and bulk-synchronous won only 3 of 16 small cases at
// 2 PEs, by at most 4 %, so the threshold sits just below 128^3 (2 Mi multiply-adds).
inline constexpr double kFusionThresholdMacs = 2.0 * 1024 * 1024;

// A fused GEMM op's tile of C (its options' tile_m x tile_n).
struct GemmTileShape {
  std::size_t m = 0, n = 0;
};
// The tile a fused GEMM op (ag_gemm, gemm_rs, gemm_ar, gemm_as) uses when its options leave
// tile_m and tile_n at 0 (their default), each side at most C's. On the host backend every tile
// is one BLAS call, which packs its A and B panels again: 64 x 256 tiles reached 0.74-0.92 of the
// BLAS's sgemm (CPU time, 512^3-2048^3), 256 x 512 tiles 0.87-0.97 (docs/perf/earlier-runs.md). On
// a GPU backend a block's tile stays 64 x 256.
inline constexpr GemmTileShape kHostGemmTile{256, 512};
inline constexpr GemmTileShape kGpuGemmTile{64, 256};
// gemm_ar with a local k below this (fewer than 32 flops per byte it moves) runs
// producer_consumer under `automatic`, else fused_sequential (measured on 8192 x 1024 x 64).
inline constexpr std::size_t kGemmArProducerConsumerMaxK = 64;
// all_reduce_rmsnorm fuses below this many bytes of x per PE (one kernel saves a launch and a
// pass over the rows; above it the all_reduce algorithms that move less win).
inline constexpr std::size_t kRmsnormFusionMaxBytes = std::size_t{256} << 10;

// The pattern `automatic` picks for `op` on an m x n x k problem (the op's own shape arguments in
// the order its constructor takes them; all_reduce_rmsnorm: m = rows, n = hidden, k = bytes per
// element) over n_pes PEs, all_mapped telling whether every peer's heap is load/store reachable.
// The rule, derived from tessera-bench taxonomy at 2 and 4 PEs on the host backend
// (docs/perf/earlier-runs.md, "taxonomy"):
//   one PE                        bulk_synchronous (nothing to overlap);
//   a peer not mapped             not measured: the kernels the ops ran before patterns existed
//                                 (ag_gemm, gemm_as workgroup_specialized; gemm_rs, gemm_ar,
//                                 all_reduce_rmsnorm fused_sequential), which push through the
//                                 proxy where the bulk-synchronous collectives cannot;
//   all_reduce_rmsnorm            fused_sequential up to kRmsnormFusionMaxBytes of x, else
//                                 bulk_synchronous;
//   below kFusionThresholdMacs    bulk_synchronous;
//   otherwise                     resolve_fused_overlap.
// Never returns automatic.
OverlapPattern resolve_overlap(OpKind op, std::size_t m, std::size_t n, std::size_t k, int n_pes,
                               bool all_mapped) noexcept;

// The fused pattern `automatic` picks when fusing pays (and when the caller fixed a direction,
// which bulk_synchronous does not take): ag_gemm and gemm_as workgroup_specialized (the gather or
// scatter is a pure copy one block keeps up with); gemm_rs producer_consumer (it won every
// communication-heavy case measured); gemm_ar producer_consumer when k (its k_local) is below
// kGemmArProducerConsumerMaxK, else fused_sequential.
OverlapPattern resolve_fused_overlap(OpKind op, std::size_t m, std::size_t n, std::size_t k,
                                     int n_pes) noexcept;

// The direction `automatic` resolves to: pull when every peer is mapped, else push; a direction
// given explicitly is returned unchanged. bulk_synchronous has none of its own (the collective
// picks its algorithm) and resolves to automatic.
CommDirection resolve_direction(OverlapPattern pattern, CommDirection direction,
                                bool all_mapped) noexcept;

}  // namespace tessera::ops
