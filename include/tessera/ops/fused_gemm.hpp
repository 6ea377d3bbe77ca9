// The fused GEMM op family: ag_gemm, gemm_rs, gemm_ar and gemm_as (and a fifth op the same way).
// Each multiplies tiles of A x B and moves them between PEs in one of the overlap patterns of
// overlap.hpp; what they share is said once here: the options, the calls and what a call
// promises. Each op's header adds its constructor (its shape's names) and what is its own.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "tessera/device/tile.hpp"
#include "tessera/ops/gemm_dtype.hpp"
#include "tessera/ops/overlap.hpp"
#include "tessera/stream.hpp"

namespace tessera::detail {
class FusedGemmState;  // src/ops/fused_gemm.hpp: the op's workspace and schedule
}  // namespace tessera::detail

namespace tessera::ops {

// The knobs every fused GEMM op takes (an op's options add its own).
struct FusedGemmOptions {
  // How communication overlaps the GEMM (automatic: resolve_overlap for the op, shape and job).
  OverlapPattern pattern = OverlapPattern::automatic;
  // push: tiles are put into their destination's heap (any transport); pull: the destination
  // reads them in place (every peer mapped). automatic: pull when every peer is mapped. Not for
  // bulk_synchronous, whose collective picks.
  CommDirection direction = CommDirection::automatic;
  int comm_blocks = 1;     // workgroup_specialized / producer_consumer: blocks that communicate
  int compute_blocks = 3;  // blocks that compute (fused_sequential: blocks that do both)
  // C's tile per compute step; both 0 (the default): kHostGemmTile on the host backend,
  // kGpuGemmTile on a GPU backend (overlap.hpp).
  std::size_t tile_m = 0;
  std::size_t tile_n = 0;
  // Test hook: each tile's communication waits this long before it starts, so the PEs that wait
  // for it reach their waits first. 0 in production.
  std::uint32_t comm_delay_us = 0;
};

// What the four ops share. Constructing an op is collective: it resolves the pattern and the
// direction and allocates the op's symmetric workspace (Error(invalid_argument) on a zero shape
// or bad options, Error(transport) when pull is asked for and a peer is not mapped,
// Error(out_of_memory) when the heap cannot hold the workspace). Destroying it frees that
// workspace collectively: destroy ops in the same order on every PE.
class FusedGemm {
 public:
  FusedGemm(FusedGemm&&) noexcept;
  FusedGemm& operator=(FusedGemm&&) noexcept;
  ~FusedGemm();

  // Enqueues one call on `stream` (stream-ordered, like a kernel); the op's header says what a,
  // b and c are. Outputs are fp32 in any memory. Once the stream has run it, the inputs may be
  // overwritten and c holds the result; no barrier is needed between calls. Every PE makes the
  // same calls in the same order. Throws Error(invalid_argument) on a null pointer or a dtype
  // other than the one constructed with; producer_consumer on a native GPU stream throws
  // Error(backend) (Stream::wait_for is host-only for now).
  // Capture (Stream::begin_capture, docs/graphs.md): the op's epochs live in its workspace and
  // advance on the device, so a captured run replays correctly. bulk_synchronous gemm_rs and
  // gemm_ar reduce through ops::reduce_scatter and ops::all_reduce: their first run refuses a
  // capture as those do (run once before begin_capture).
  void run(Stream& stream, const float* a, const float* b, float* c);
  void run(Stream& stream, const device::bf16* a, const device::bf16* b, float* c);

  // The pattern `automatic` resolved to (never automatic).
  OverlapPattern pattern() const;
  // The direction chosen (push or pull; automatic for bulk_synchronous, whose collective picks).
  CommDirection direction() const;
  // C's global rows and the inputs' element type.
  std::size_t m() const;
  GemmDtype dtype() const;

 protected:
  explicit FusedGemm(std::unique_ptr<detail::FusedGemmState> state);
  // C's columns computed on this PE and the inner dimension, under each op's own names.
  std::size_t cols() const;
  std::size_t inner() const;
  std::unique_ptr<detail::FusedGemmState> state_;
};

}  // namespace tessera::ops
