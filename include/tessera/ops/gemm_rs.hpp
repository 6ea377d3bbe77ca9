// tessera::ops::GemmRs: C_shard[M/P, N] = reduce_scatter(A[M, K_local] x B[K_local, N]) with the
// reduction overlapped with the GEMM (DESIGN §7). The kernel it launches is the building block in
// <tessera/device/ops/gemm_rs.hpp> (device/), which user kernels can call themselves.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "tessera/device/team.hpp"
#include "tessera/device/tile.hpp"
#include "tessera/heap.hpp"
#include "tessera/ops/gemm_dtype.hpp"
#include "tessera/ops/overlap.hpp"
#include "tessera/runtime.hpp"
#include "tessera/stream.hpp"

namespace tessera::ops {

struct GemmRsOptions {
  int compute_blocks = 4;  // blocks per PE; each computes, publishes and sums tiles
  // C's tile per compute step; both 0 (the default): kHostGemmTile on the host backend,
  // kGpuGemmTile on a GPU backend (overlap.hpp).
  std::size_t tile_m = 0;
  std::size_t tile_n = 0;
  // Test hook: each block waits this long before publishing each partial tile, so owners reach
  // their waits first. 0 in production.
  std::uint32_t comm_delay_us = 0;
  // How the reduction overlaps the GEMM (overlap.hpp; automatic: resolve_overlap(OpKind::gemm_rs,
  // ...): bulk_synchronous below the fusion threshold or on one PE, else producer_consumer;
  // fused_sequential without a direction is push, the kernel before patterns existed).
  // bulk_synchronous runs the GEMM
  // kernel, then ops::all_reduce of the partials and a copy of this PE's rows;
  // workgroup_specialized and producer_consumer give the publishing and summing to comm_blocks
  // blocks (producer_consumer: in a kernel on a stream this object owns).
  OverlapPattern pattern = OverlapPattern::automatic;
  int comm_blocks = 1;  // workgroup_specialized / producer_consumer: blocks that communicate
  CommDirection direction = CommDirection::automatic;  // push (any transport) or pull (mapped)
};

class GemmRs {
 public:
  // Collective: allocates the symmetric workspace (n_pes partial slots of m/n_pes x n floats, so
  // m x n floats, plus n_pes * tiles flags). m is the global row count and must be a multiple of
  // n_pes. Throws Error(invalid_argument) on a zero or indivisible shape or bad options,
  // Error(out_of_memory) when the heap cannot hold the workspace.
  GemmRs(Runtime& rt, std::size_t m, std::size_t n, std::size_t k_local, GemmDtype dtype,
         const GemmRsOptions& options = {});
  GemmRs(GemmRs&&) noexcept = default;
  ~GemmRs() = default;  // frees the workspace collectively (destroy in the same order everywhere)

  // Enqueues one call on `stream` (stream-ordered, like a kernel): a is this PE's m x k_local,
  // b its k_local x n, c receives this PE's m/n_pes x n rows of the sum over all PEs (all dense,
  // row-major; c in fp32). No barrier is needed between calls; every PE makes the same calls in
  // the same order. Throws Error(invalid_argument) on a null pointer or a dtype other than the
  // one constructed with.
  void run(Stream& stream, const float* a, const float* b, float* c);
  void run(Stream& stream, const device::bf16* a, const device::bf16* b, float* c);

  // The pattern and direction chosen at construction (pattern never automatic; direction
  // automatic only for bulk_synchronous).
  OverlapPattern pattern() const { return pattern_; }
  CommDirection direction() const { return direction_; }

  std::size_t m() const { return m_; }
  std::size_t n() const { return n_; }
  std::size_t k_local() const { return k_local_; }
  GemmDtype dtype() const { return dtype_; }

 private:
  template <class T>
  void run_typed(Stream& stream, const T* a, const T* b, float* c);

  Runtime* rt_;
  std::size_t m_, n_, k_local_;
  GemmDtype dtype_;
  GemmRsOptions options_;
  OverlapPattern pattern_ = OverlapPattern::fused_sequential;
  CommDirection direction_ = CommDirection::push;
  Symmetric<float> slots_;
  Symmetric<float> scratch_;        // per-block staging for unmapped owners
  Symmetric<std::uint64_t> words_;  // tile flags, consumed, readers_done
  std::uint64_t epoch_ = 0;
  // The other patterns (device::ops::GemmArArgs with all_rows = false): partials, push slots,
  // [ready | part flags | sum flags | consumed | readers] words, the bulk team, the second stream.
  Symmetric<float> partial_;
  Symmetric<float> pipe_slots_;
  Symmetric<std::uint64_t> pipe_words_;
  const device::Team* team_ = nullptr;
  std::unique_ptr<Stream> comm_;
};

}  // namespace tessera::ops
