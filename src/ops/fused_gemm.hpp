// The skeleton every fused GEMM op's launcher is made of (public side:
// <tessera/ops/fused_gemm.hpp>): the shape and option checks, the tile, the handshake words and
// the second stream, the argument checks of run(), the epochs, and the launches. An op is one
// class derived from FusedGemmSchedule with its FusedGemmSpec (kSpec), prepare(options), which
// resolves its pattern and allocates its workspace, and enqueue<T>(), what one call runs: its
// schedule and its epilogue; make_fused_gemm makes it. Internal.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "ops/overlap_support.hpp"
#include "tessera/device/ops/overlap.hpp"
#include "tessera/device/signal.hpp"
#include "tessera/device/tile.hpp"
#include "tessera/heap.hpp"
#include "tessera/launch.hpp"
#include "tessera/ops/fused_gemm.hpp"
#include "tessera/runtime.hpp"
#include "tessera/stream.hpp"

namespace tessera::detail {

// What an op tells the skeleton about itself.
struct FusedGemmSpec {
  const char* name;    // "gemm_ar": the prefix of every error message
  ops::OpKind kind;    // for resolve_overlap
  const char* n_name;  // C's columns as the op's constructor names them ("n", "n_local")
  const char* k_name;  // the inner dimension ("k", "k_local")
  const char* a_name;  // run()'s first input ("a", "a_shard")
  bool rows_sharded;   // m must be a multiple of n_pes
};

class FusedGemmState {
 public:
  // Checks the shape (non-zero; m a multiple of n_pes when rows_sharded) and resolves the tile
  // against the m x n tiles computed; the op checks its blocks (check_blocks) and resolves
  // `overlap`.
  FusedGemmState(Runtime& rt, const FusedGemmSpec& spec, std::size_t m, std::size_t n,
                 std::size_t k, ops::GemmDtype dtype, const ops::FusedGemmOptions& options);
  virtual ~FusedGemmState() = default;
  FusedGemmState(const FusedGemmState&) = delete;
  FusedGemmState& operator=(const FusedGemmState&) = delete;

  // One call, after check_run: the op's schedule (FusedGemmSchedule forwards to enqueue<T>).
  virtual void enqueue_call(Stream& stream, const float* a, const float* b, float* c) = 0;
  virtual void enqueue_call(Stream& stream, const device::bf16* a, const device::bf16* b,
                            float* c) = 0;

  // Throws Error(invalid_argument) "<op>: <message>".
  [[noreturn]] void bad(const std::string& message) const;
  // "comm_blocks and compute_blocks must be at least 1, got X and Y" unless both are.
  void check_blocks() const;
  // check_blocks, then `overlap` from the options as resolve gives it.
  void resolve_options();
  // The pattern and direction from options as resolve_fused gives them (direction overrides
  // options.direction: ops that pick their own default pass it).
  ResolvedOverlap resolve(ops::CommDirection direction) const;
  // `count` zeroed handshake words followed by the op's call counts (kEpochs DeviceEpochs, zero
  // too; every PE's before any peer signals into them: ends with a barrier) and, for
  // producer_consumer, the second stream.
  void allocate_words(std::size_t count);

  // The op's call counts in device memory, after the handshake words: every call advances each
  // of them once, on the device, so a call captured into a Graph takes a new epoch on every
  // replay. main_epoch is taken by the call's kernel on the caller's stream, comm_epoch by
  // producer_consumer's kernel on the second stream: two counts in lockstep, each read and
  // advanced on one stream only, so neither stream waits for the other to learn the epoch.
  device::DeviceEpoch main_epoch() const;
  device::DeviceEpoch comm_epoch() const;

  // The handshake words of the next call: ready at `ready`, consumed and readers_done at
  // `consumed` (n_pes + 1 words); the epoch is 0, the kernels take it on the device.
  device::ops::OverlapWords next_words(std::uint64_t* ready, std::uint64_t* consumed) const;
  // The bulk-synchronous GEMM, c = a x b in tiles, on compute_blocks blocks.
  template <class T>
  void gemm_tiles(Stream& stream, device::Tile<float> c, device::Tile<const T> a,
                  device::Tile<const T> b) const {
    launch(stream, options.compute_blocks, GemmTilesKernel{}, c, a, b, options.tile_m,
           options.tile_n);
  }
  // bulk_synchronous ag_gemm and gemm_as: the all-gather of `bytes` from every PE's `send` into
  // slot p of the symmetric `recv` (n_pes * bytes; send may be this PE's slot) by ops::all_gather's
  // kernel (ops/all_gather_launch.hpp: ring or one-shot by resolve_all_gather_algo, never staged)
  // on the op's own signal words (gather_words(n_pes) of its handshake words) and call count
  // (main_epoch, taken on the device): the call may be captured and replayed, with no first-call
  // host work.
  static std::size_t gather_words(int n_pes);
  void all_gather(Stream& stream, const void* send, void* recv, std::size_t bytes) const;
  // One call of a tile-pipelined pattern (overlap_support.hpp) of `op`.
  template <class Op>
  void launch_pipelined(Stream& stream, const Op& op) const {
    detail::launch_pipelined(stream, comm.get(), overlap.pattern, rt.device_context(), op,
                             options.comm_blocks, options.compute_blocks, main_epoch(),
                             comm_epoch());
  }

  Runtime& rt;
  const FusedGemmSpec spec;
  const std::size_t m, n, k;  // C is m x n (gemm_as: n_local, its block); a x b has inner k
  const ops::GemmDtype dtype;
  ops::FusedGemmOptions options;  // the tile resolved
  ResolvedOverlap overlap;
  static constexpr std::size_t kEpochs = 2;  // main_epoch, comm_epoch
  Symmetric<std::uint64_t> words;            // the handshake words, then the call counts
  std::size_t handshake_words = 0;           // allocate_words' count
  std::unique_ptr<Stream> comm;              // producer_consumer
};

// The base of an op's state: forwards both element types to Op::enqueue<T>(stream, a, b, c).
template <class Op>
class FusedGemmSchedule : public FusedGemmState {
 public:
  using FusedGemmState::FusedGemmState;
  void enqueue_call(Stream& stream, const float* a, const float* b, float* c) final {
    static_cast<Op*>(this)->enqueue(stream, a, b, c);
  }
  void enqueue_call(Stream& stream, const device::bf16* a, const device::bf16* b, float* c) final {
    static_cast<Op*>(this)->enqueue(stream, a, b, c);
  }
};

// A new Op state for the public op's constructor: Op's skeleton on Op::kSpec, then
// Op::prepare(options).
template <class Op, class Options>
std::unique_ptr<FusedGemmState> make_fused_gemm(Runtime& rt, std::size_t m, std::size_t n,
                                                std::size_t k, ops::GemmDtype dtype,
                                                const Options& options) {
  auto op = std::make_unique<Op>(rt, Op::kSpec, m, n, k, dtype, options);
  op->prepare(options);
  return op;
}

}  // namespace tessera::detail
