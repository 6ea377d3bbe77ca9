// tessera::ops::MoeBuffer: MoE dispatch and combine over the symmetric heap (DESIGN §7). Tokens
// x[T, H] with routing topk_idx[T, k] (-1: unused slot) and weights topk_weight[T, k] go to E
// experts split evenly over the PEs; each token is sent once per destination PE and expanded
// there into its local experts' segments; combine brings every expert output back and sums
// y_t = sum_k w_{t,k} * out_{t,k} in fp32. The kernels are made of the building blocks in
// <tessera/device/ops/moe.hpp> (namespace tessera::device::ops), callable from user kernels.
#pragma once

#include <cstddef>
#include <cstdint>

#include "tessera/device/tile.hpp"
#include "tessera/heap.hpp"
#include "tessera/runtime.hpp"
#include "tessera/stream.hpp"

namespace tessera::ops {

enum class MoeDtype { f32, bf16 };

// "f32" or "bf16".
const char* to_string(MoeDtype dtype) noexcept;

struct MoeConfig {
  std::size_t max_tokens_per_pe = 0;  // T of any call is at most this
  std::size_t hidden = 0;             // H
  int topk = 0;                       // k, 1 .. 32 and at most num_experts
  int num_experts = 0;                // E, a multiple of n_pes
  MoeDtype dtype = MoeDtype::bf16;    // of x, expert outputs and y (weights are fp32)
  // Tokens a PE may receive per dispatch, each counted once per PE; 0: max_tokens_per_pe * n_pes
  // (the most that can arrive, so the default never overflows).
  std::size_t recv_capacity = 0;
  // Expert rows a PE may hold per dispatch, alignment padding included; 0: the most that can
  // arrive, recv_capacity * min(topk, local experts) + padding.
  std::size_t expert_capacity = 0;
  std::size_t expert_alignment = 1;  // each local expert's segment starts at a multiple of this
  int max_blocks = 4;                // largest grid a call may use (sizes the scratch)
};

// What a dispatch produced on this PE. A view into the MoeBuffer: its contents are valid once the
// stream has run the dispatch, until the next dispatch on the same buffer. A handle returned
// during a capture (Stream::begin_capture) describes every replay of the captured dispatch: its
// pointers and `tokens` stay valid, and after a replay has run (e.g. after synchronize()) the
// arrays it points to hold that replay's results; nothing it points to may be read on the host
// while the capture is open or a replay may still be running (rows() reads device memory).
struct MoeHandle {
  // The dispatch it belongs to in the host's call order (1, 2, ...), for combine's check; the
  // kernels number their calls on the device (replays of a captured dispatch keep this value).
  std::uint64_t epoch = 0;
  std::size_t tokens = 0;  // tokens this PE dispatched (rows of y in combine)
  int local_experts = 0;   // experts of this PE: global ids pe * local_experts + i
  std::size_t hidden = 0;
  MoeDtype dtype = MoeDtype::bf16;
  // [rows(), hidden] of dtype: the received tokens, expert i's in rows
  // [expert_offsets[i], expert_offsets[i] + expert_counts[i]), then padding up to
  // expert_offsets[i + 1]. Within a segment rows are ordered by source PE, then source token.
  const void* expert_x = nullptr;
  const std::int64_t* expert_counts = nullptr;   // [local_experts] tokens per local expert
  const std::int64_t* expert_offsets = nullptr;  // [local_experts + 1] segment starts
  // Per row: source PE (-1 on padding), source token, top-k slot, routing weight.
  const std::int32_t* src_pe = nullptr;
  const std::int32_t* src_token = nullptr;
  const std::int32_t* slot = nullptr;
  const float* weight = nullptr;
  const std::int64_t* recv_tokens = nullptr;  // [1] tokens received, each once per source token

  // Rows of expert_x in use, padding included (read on the host after the stream ran the
  // dispatch: never during a capture).
  std::size_t rows() const { return static_cast<std::size_t>(expert_offsets[local_experts]); }
};

class MoeBuffer {
 public:
  // Collective: checks the config (same on every PE) and allocates the symmetric receive buffers
  // and signal words. Throws Error(invalid_argument) when num_experts is not a positive multiple
  // of n_pes, topk is outside [1, min(32, num_experts)], a size is zero or the PEs disagree;
  // Error(out_of_memory) when the heap cannot hold the buffers.
  MoeBuffer(Runtime& rt, const MoeConfig& config);
  MoeBuffer(MoeBuffer&&) noexcept = default;
  ~MoeBuffer() = default;  // frees collectively: destroy in the same order on every PE

  // Collective, stream-ordered: enqueues one dispatch of `tokens` rows of x (this PE's memory,
  // dense [tokens, hidden]) routed by topk_idx/topk_weight (dense [tokens, topk]). One kernel:
  // layout pass, count exchange with signals, send (each token straight into its expert rows on
  // their PEs: one copy per row), per-row metadata on the receiving PEs. Until the stream has run
  // it the inputs must stay valid. A call whose counts exceed a capacity, or whose topk_idx holds a
  // value outside
  // [-1, num_experts), or with tokens > max_tokens_per_pe on any PE, fails on every PE at
  // stream.synchronize() with Error(invalid_argument) naming the PE, expert and counts; nothing
  // is written and the buffer stays usable. Throws at once on a dtype mismatch or null pointer.
  // Capturable (Stream::begin_capture): the host only checks and enqueues; the kernel takes its
  // epoch from a count in the buffer's device words, so every replay is a new dispatch (same
  // pointers and tokens as captured, the inputs' contents read at each replay).
  MoeHandle dispatch(Stream& stream, const float* x, std::size_t tokens,
                     const std::int32_t* topk_idx, const float* topk_weight);
  MoeHandle dispatch(Stream& stream, const float* x, std::size_t tokens,
                     const std::int64_t* topk_idx, const float* topk_weight);
  MoeHandle dispatch(Stream& stream, const device::bf16* x, std::size_t tokens,
                     const std::int32_t* topk_idx, const float* topk_weight);
  MoeHandle dispatch(Stream& stream, const device::bf16* x, std::size_t tokens,
                     const std::int64_t* topk_idx, const float* topk_weight);

  // Collective, stream-ordered: expert_out has expert_x's layout ([handle.rows(), hidden], this
  // PE's memory); y ([handle.tokens, hidden]) receives sum_k w * out for every token this PE
  // dispatched (0 for a token without experts), accumulated in fp32. `handle` must come from the
  // latest dispatch; combine may run more than once on it. Throws Error(invalid_argument) on a
  // stale handle, a dtype mismatch or a null pointer. Capturable, alone or after the dispatch in
  // the same capture: the kernel combines the device's latest dispatch on this buffer and counts
  // its calls on the device.
  void combine(Stream& stream, const MoeHandle& handle, const float* expert_out, float* y);
  void combine(Stream& stream, const MoeHandle& handle, const device::bf16* expert_out,
               device::bf16* y);

  const MoeConfig& config() const { return config_; }
  int local_experts() const { return local_experts_; }
  // Grid a call on `tokens` tokens uses: 1 block up to kMoeDecodeTokens (the decode path: one
  // single-block kernel), else this PE's share of the node's cores (the cores its process may
  // run on, shared by the node's PEs; TESSERA_CORES overrides the count), at most
  // config().max_blocks, so PEs x blocks do not oversubscribe the cores.
  int blocks_for(std::size_t tokens) const;

  // Tokens per PE up to which a call is one single-block kernel.
  static constexpr std::size_t kMoeDecodeTokens = 128;

 private:
  // The device layout and workspace the kernels take (defined in moe.cpp).
  template <class T>
  auto kernel_args() const;
  template <class T, class Idx>
  MoeHandle dispatch_typed(Stream& stream, const T* x, std::size_t tokens, const Idx* topk_idx,
                           const float* topk_weight);
  template <class T>
  void combine_typed(Stream& stream, const MoeHandle& handle, const T* expert_out, T* y);

  Runtime* rt_;
  MoeConfig config_;
  int local_experts_ = 0;
  int grid_cap_ = 1;  // prefill grid: min(max_blocks, this PE's share of the node's cores)
  std::size_t staging_rows_ = 0;
  Symmetric<std::uint64_t> words_;    // records, signals, counters, cursors
  Symmetric<unsigned char> staging_;  // tokens in, partials back
  Symmetric<std::uint32_t> staging_meta_;
  Symmetric<unsigned char> expert_x_;  // received tokens by expert
  Symmetric<std::int32_t> row_info_;   // src_pe, src_token, slot per row; recv_expand; send_pos
  Symmetric<float> floats_;            // row weights, accumulators
  Symmetric<std::int64_t> layout_;     // expert counts, offsets, received tokens
  Symmetric<unsigned char> out_rows_;  // per-block partial rows of dtype
  // Dispatches enqueued by the host, for the handle check only: the kernels count their calls in
  // device words (MoeCounters at the end of words_), so a captured call replays correctly.
  std::uint64_t dispatch_epoch_ = 0;
};

}  // namespace tessera::ops
