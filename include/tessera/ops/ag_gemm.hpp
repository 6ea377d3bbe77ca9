// tessera::ops::AgGemm: C[M, N_local] = allgather(A_shard[M/P, K]) x B[K, N_local] with the gather
// overlapped with the GEMM (DESIGN §7). The kernel it launches is made of the building blocks in
// <tessera/device/ops/ag_gemm.hpp> (device/), which user kernels can call themselves.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "tessera/device/tile.hpp"
#include "tessera/heap.hpp"
#include "tessera/ops/gemm_dtype.hpp"
#include "tessera/ops/overlap.hpp"
#include "tessera/runtime.hpp"
#include "tessera/stream.hpp"

namespace tessera::ops {

// push: the shard is put into every PE's gathered copy of A (any transport). pull: compute
// blocks read peers' shards from their mapped heaps, no copy (all peers mapped). automatic: pull
// when every peer is mapped, else push.
enum class AgGemmVariant { automatic, push, pull };

const char* to_string(AgGemmVariant variant) noexcept;

struct AgGemmOptions {
  AgGemmVariant variant = AgGemmVariant::automatic;
  int comm_blocks = 1;     // blocks that publish the shard
  int compute_blocks = 3;  // blocks that compute C's tiles
  // C's tile per compute step; both 0 (the default): kHostGemmTile on the host backend,
  // kGpuGemmTile on a GPU backend (overlap.hpp).
  std::size_t tile_m = 0;
  std::size_t tile_n = 0;
  std::size_t chunk_rows = 64;  // rows of A per signalled chunk (push)
  // Test hook: the communication blocks wait this long before publishing each chunk, so compute
  // blocks reach their waits first. 0 in production.
  std::uint32_t comm_delay_us = 0;
  // How the gather overlaps the GEMM (overlap.hpp; automatic: resolve_overlap(OpKind::ag_gemm,
  // ...): bulk_synchronous below the fusion threshold or on one PE, else workgroup_specialized,
  // the kernel before patterns existed; a variant given explicitly keeps the fused pattern).
  // bulk_synchronous runs
  // ops::all_gather then the GEMM (variant must be automatic); producer_consumer the
  // communication blocks' kernel on a stream this object owns; fused_sequential makes every block
  // publish its share of the chunks before it computes. variant is the direction of the others.
  OverlapPattern pattern = OverlapPattern::automatic;
};

class AgGemm {
 public:
  // Collective: allocates the symmetric workspace (push: the gathered A, m x k elements; flags of
  // n_pes words or so either way). m is the global row count and must be a multiple of n_pes.
  // Throws Error(invalid_argument) on a zero or indivisible shape or bad options,
  // Error(transport) when pull is asked for and a peer is not mapped, Error(out_of_memory) when
  // the heap cannot hold the workspace.
  AgGemm(Runtime& rt, std::size_t m, std::size_t n_local, std::size_t k, GemmDtype dtype,
         const AgGemmOptions& options = {});
  AgGemm(AgGemm&&) noexcept = default;
  ~AgGemm() = default;  // frees the workspace collectively (destroy in the same order everywhere)

  // Enqueues one call on `stream` (stream-ordered, like a kernel): a_shard is this PE's
  // m/n_pes x k rows (dense), b is k x n_local, c receives m x n_local (all dense, row-major).
  // For pull, a_shard is read by peers in place when it lies in the heap (it must then be the
  // same symmetric object on every PE), else it is copied into the workspace first. Once the
  // stream has run it, a_shard may be overwritten and c holds the result; no barrier is needed
  // between calls. Every PE makes the same calls in the same order. Throws
  // Error(invalid_argument) on a null pointer, a dtype other than the one constructed with, or an
  // a_shard partly outside the heap.
  void run(Stream& stream, const float* a_shard, const float* b, float* c);
  void run(Stream& stream, const device::bf16* a_shard, const device::bf16* b, float* c);

  // The algorithm chosen at construction (never automatic).
  AgGemmVariant variant() const { return variant_; }
  // The pattern chosen at construction (never automatic).
  OverlapPattern pattern() const { return pattern_; }
  // push: the gathered A (m x k, dtype elements) of the latest call, valid once the stream has
  // run it and until the next call. pull: null.
  const void* gathered_a() const { return gathered_.get(); }

  std::size_t m() const { return m_; }
  std::size_t n_local() const { return n_local_; }
  std::size_t k() const { return k_; }
  GemmDtype dtype() const { return dtype_; }

 private:
  template <class T>
  void run_typed(Stream& stream, const T* a_shard, const T* b, float* c);

  Runtime* rt_;
  std::size_t m_, n_local_, k_;
  GemmDtype dtype_;
  AgGemmOptions options_;
  AgGemmVariant variant_;
  OverlapPattern pattern_ = OverlapPattern::workgroup_specialized;
  std::unique_ptr<Stream> comm_;       // producer_consumer: the communication kernel's stream
  Symmetric<unsigned char> gathered_;  // push
  Symmetric<unsigned char> staging_;   // pull: a_shard copied here when it is not in the heap
  Symmetric<std::uint64_t> words_;     // chunk flags, ready, consumed, readers_done
  std::uint64_t epoch_ = 0;
};

}  // namespace tessera::ops
