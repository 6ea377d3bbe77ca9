// The fused GEMM family's shared half: the public FusedGemm calls and the skeleton of
// src/ops/fused_gemm.hpp.
#include "ops/fused_gemm.hpp"

#include <string>
#include <utility>

#include "ops/all_gather_launch.hpp"
#include "ops/heap_fill.hpp"
#include "tessera/device/ops/all_gather.hpp"
#include "tessera/error.hpp"
#include "tessera/launch.hpp"
#include "tessera/ops/all_gather.hpp"

namespace tessera::ops {

FusedGemm::FusedGemm(std::unique_ptr<detail::FusedGemmState> state) : state_(std::move(state)) {}
FusedGemm::FusedGemm(FusedGemm&&) noexcept = default;
FusedGemm::~FusedGemm() {
  // The second stream first, as before the family: it may run a kernel that reads the op's
  // workspace, which the op's own members (destroyed before the skeleton's) hold.
  if (state_) state_->comm.reset();
}

FusedGemm& FusedGemm::operator=(FusedGemm&& other) noexcept {
  if (this != &other) {
    if (state_) state_->comm.reset();  // as in the destructor
    state_ = std::move(other.state_);
  }
  return *this;
}

void FusedGemm::run(Stream& stream, const float* a, const float* b, float* c) {
  detail::FusedGemmState& s = *state_;
  detail::check_gemm_run(s.spec.name, s.rt.pe(), s.dtype, GemmDtype::f32, s.spec.a_name, a, b, c);
  s.enqueue_call(stream, a, b, c);
}

void FusedGemm::run(Stream& stream, const device::bf16* a, const device::bf16* b, float* c) {
  detail::FusedGemmState& s = *state_;
  detail::check_gemm_run(s.spec.name, s.rt.pe(), s.dtype, GemmDtype::bf16, s.spec.a_name, a, b, c);
  s.enqueue_call(stream, a, b, c);
}

OverlapPattern FusedGemm::pattern() const { return state_->overlap.pattern; }
CommDirection FusedGemm::direction() const { return state_->overlap.direction; }
std::size_t FusedGemm::m() const { return state_->m; }
GemmDtype FusedGemm::dtype() const { return state_->dtype; }
std::size_t FusedGemm::cols() const { return state_->n; }
std::size_t FusedGemm::inner() const { return state_->k; }

}  // namespace tessera::ops

namespace tessera::detail {

FusedGemmState::FusedGemmState(Runtime& runtime, const FusedGemmSpec& op, std::size_t rows,
                               std::size_t cols, std::size_t inner, ops::GemmDtype type,
                               const ops::FusedGemmOptions& requested)
    : rt(runtime), spec(op), m(rows), n(cols), k(inner), dtype(type), options(requested) {
  if (m == 0 || n == 0 || k == 0) {
    bad("shape must be non-zero, got m=" + std::to_string(m) + " " + spec.n_name + "=" +
        std::to_string(n) + " " + spec.k_name + "=" + std::to_string(k));
  }
  const auto n_pes = static_cast<std::size_t>(rt.n_pes());
  if (spec.rows_sharded && m % n_pes != 0) {
    bad("m=" + std::to_string(m) + " must be a multiple of the number of PEs (" +
        std::to_string(n_pes) + ")");
  }
  resolve_gemm_tile(rt, spec.name, options.tile_m, options.tile_n, m, n);
}

void FusedGemmState::bad(const std::string& message) const {
  throw Error(ErrorCode::invalid_argument, rt.pe(), std::string(spec.name) + ": " + message);
}

void FusedGemmState::check_blocks() const {
  if (options.comm_blocks < 1 || options.compute_blocks < 1) {
    bad("comm_blocks and compute_blocks must be at least 1, got " +
        std::to_string(options.comm_blocks) + " and " + std::to_string(options.compute_blocks));
  }
}

void FusedGemmState::resolve_options() {
  check_blocks();
  overlap = resolve(options.direction);
}

ResolvedOverlap FusedGemmState::resolve(ops::CommDirection direction) const {
  return resolve_fused(rt, spec.kind, options.pattern, direction, m, n, k);
}

void FusedGemmState::allocate_words(std::size_t count) {
  const std::size_t total = count + kEpochs * device::DeviceEpoch::kWords;
  handshake_words = count;
  words = rt.alloc<std::uint64_t>(total);
  zero_heap(rt, words.get(), total * sizeof(std::uint64_t));
  if (overlap.pattern == ops::OverlapPattern::producer_consumer) comm = make_comm_stream(rt);
  rt.barrier();  // every PE's words are zero before any peer signals into them
}

std::size_t FusedGemmState::gather_words(int n_pes) {
  return device::ops::AllGatherSignals::kWordsPerPe * static_cast<std::size_t>(n_pes);
}

void FusedGemmState::all_gather(Stream& stream, const void* send, void* recv,
                                std::size_t bytes) const {
  const bool ring = ops::resolve_all_gather_algo(bytes, ops::AllGatherAlgo::automatic) ==
                    ops::AllGatherAlgo::ring;
  launch_all_gather(rt, stream, recv, send, bytes,
                    device::ops::AllGatherSignals::from_words(words.get(), rt.n_pes()),
                    main_epoch(), ring, nullptr);
}

device::DeviceEpoch FusedGemmState::main_epoch() const {
  return device::DeviceEpoch{words.get() + handshake_words};
}

device::DeviceEpoch FusedGemmState::comm_epoch() const {
  return device::DeviceEpoch{words.get() + handshake_words + device::DeviceEpoch::kWords};
}

device::ops::OverlapWords FusedGemmState::next_words(std::uint64_t* ready,
                                                     std::uint64_t* consumed) const {
  device::ops::OverlapWords w;
  w.ready = ready;
  w.consumed = consumed;
  w.readers_done = consumed + rt.n_pes();
  w.groups = overlap_groups(overlap.pattern, options.comm_blocks, options.compute_blocks);
  w.epoch = 0;  // taken on the device (main_epoch, comm_epoch)
  w.comm_delay_us = options.comm_delay_us;
  return w;
}

}  // namespace tessera::detail
