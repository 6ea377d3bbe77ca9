// tessera::ops::AgGemm: C[M, N_local] = allgather(A_shard[M/P, K]) x B[K, N_local] with the gather
// overlapped with the GEMM (DESIGN §7), one of the fused GEMM ops (fused_gemm.hpp). The kernel it
// launches is made of the building blocks in <tessera/device/ops/ag_gemm.hpp> (device/), which
// user kernels can call themselves.
#pragma once

#include <cstddef>

#include "tessera/heap.hpp"
#include "tessera/ops/fused_gemm.hpp"
#include "tessera/runtime.hpp"

namespace tessera::ops {

// push: the shard is put into every PE's gathered copy of A (any transport). pull: compute
// blocks read peers' shards from their mapped heaps, no copy (all peers mapped). automatic: pull
// when every peer is mapped, else push. The variant is ag_gemm's name for the direction.
enum class AgGemmVariant { automatic, push, pull };

const char* to_string(AgGemmVariant variant) noexcept;

struct AgGemmOptions : FusedGemmOptions {
  // The direction by its older name; setting both to different values is invalid_argument.
  AgGemmVariant variant = AgGemmVariant::automatic;
  std::size_t chunk_rows = 64;  // rows of A per signalled chunk (push)
  // pattern automatic: resolve_overlap(OpKind::ag_gemm, ...): bulk_synchronous below the fusion
  // threshold or on one PE, else workgroup_specialized, the kernel before patterns existed; a
  // variant given explicitly keeps a fused pattern. bulk_synchronous runs ops::all_gather then
  // the GEMM (variant must be automatic); producer_consumer the communication blocks' kernel on
  // a stream this object owns; fused_sequential makes every block publish its share of the
  // chunks before it computes. comm_blocks publish the shard, compute_blocks compute C's tiles.
};

class AgGemm : public FusedGemm {
 public:
  // The workspace: push: the gathered A, m x k elements; flags of n_pes words or so either way.
  // m is the global row count and must be a multiple of n_pes (else invalid_argument).
  AgGemm(Runtime& rt, std::size_t m, std::size_t n_local, std::size_t k, GemmDtype dtype,
         const AgGemmOptions& options = {});

  // run(stream, a_shard, b, c): a_shard is this PE's m/n_pes x k rows (dense), b is k x n_local,
  // c receives m x n_local (all dense, row-major). For pull, a_shard is read by peers in place
  // when it lies in the heap (it must then be the same symmetric object on every PE), else it is
  // copied into the workspace first. An a_shard partly outside the heap is invalid_argument.

  // The algorithm chosen at construction (never automatic).
  AgGemmVariant variant() const;
  // push: the gathered A (m x k, dtype elements) of the latest call, valid once the stream has
  // run it and until the next call. pull: null.
  const void* gathered_a() const;

  std::size_t n_local() const { return cols(); }
  std::size_t k() const { return inner(); }
};

}  // namespace tessera::ops
