// Host launcher of MoE dispatch/combine: config checks, the buffer's symmetric state, epochs, and
// the kernels that run the device building blocks on the stream.
#include "tessera/ops/moe.hpp"

#include <algorithm>
#include <cstdint>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "launch/grid_size.hpp"
#include "ops/heap_fill.hpp"
#include "runtime/op_support.hpp"
#include "tessera/device/ops/moe.hpp"
#include "tessera/launch.hpp"

namespace tessera::ops {
namespace {

namespace td = tessera::device;

[[noreturn]] void fail(int pe, const std::string& message) {
  throw Error(ErrorCode::invalid_argument, pe, "MoeBuffer: " + message);
}

std::size_t element_bytes(MoeDtype dtype) { return dtype == MoeDtype::f32 ? 4 : 2; }

template <class T>
constexpr MoeDtype dtype_of() {
  return std::is_same_v<T, float> ? MoeDtype::f32 : MoeDtype::bf16;
}

std::size_t round8(std::size_t words) { return (words + 7) / 8 * 8; }

void check_config(Runtime& rt, const MoeConfig& c) {
  const int pe = rt.pe(), n = rt.n_pes();
  if (c.num_experts <= 0 || c.num_experts % n != 0) {
    fail(pe,
         "num_experts must be a positive multiple of n_pes so experts split evenly over the "
         "PEs: got num_experts = " +
             std::to_string(c.num_experts) + " with n_pes = " + std::to_string(n));
  }
  if (c.topk < 1 || c.topk > c.num_experts || c.topk > td::ops::kMoeMaxTopk) {
    fail(pe, "topk must be in [1, min(" + std::to_string(td::ops::kMoeMaxTopk) +
                 ", num_experts)]: got topk = " + std::to_string(c.topk) +
                 " with num_experts = " + std::to_string(c.num_experts));
  }
  if (c.max_tokens_per_pe == 0) fail(pe, "max_tokens_per_pe must be at least 1, got 0");
  if (c.max_tokens_per_pe > 0x7fffffff) fail(pe, "max_tokens_per_pe must fit in 31 bits");
  if (c.hidden == 0) fail(pe, "hidden must be at least 1, got 0");
  if (c.expert_alignment == 0) fail(pe, "expert_alignment must be at least 1, got 0");
  if (c.max_blocks < 1)
    fail(pe, "max_blocks must be at least 1, got " + std::to_string(c.max_blocks));
  // Every PE must be creating a MoeBuffer (not making another collective call), with the same
  // config: compare them all.
  detail::check_op_call(rt, "ops::MoeBuffer creation", "MoeBuffer");
  constexpr int kFields = 9;
  std::vector<std::uint64_t> all(static_cast<std::size_t>(n) * kFields);
  const std::uint64_t mine[kFields] = {c.max_tokens_per_pe,
                                       c.hidden,
                                       static_cast<std::uint64_t>(c.topk),
                                       static_cast<std::uint64_t>(c.num_experts),
                                       static_cast<std::uint64_t>(c.dtype),
                                       c.recv_capacity,
                                       c.expert_capacity,
                                       c.expert_alignment,
                                       static_cast<std::uint64_t>(c.max_blocks)};
  std::copy(mine, mine + kFields, all.begin() + static_cast<std::ptrdiff_t>(pe) * kFields);
  rt.bootstrap().allgather(all.data(), kFields * sizeof(std::uint64_t));
  std::string differ;
  for (int p = 0; p < n; ++p) {
    if (!std::equal(mine, mine + kFields, all.begin() + static_cast<std::ptrdiff_t>(p) * kFields)) {
      differ += " " + std::to_string(p);
    }
  }
  if (!differ.empty())
    fail(pe, "PEs disagree on the config: PEs" + differ + " differ from PE " + std::to_string(pe));
}

template <class Idx, class T>
struct DispatchKernel {
  TESSERA_KERNEL_CODE void operator()(td::Block blk, td::Context ctx, td::ops::MoeLayout l,
                                      td::ops::MoeWorkspace<T> ws, const T* x, std::size_t tokens,
                                      const Idx* idx, const float* weight,
                                      td::ops::MoeCounters counters) const {
    td::ops::moe_dispatch(blk, ctx, l, ws, x, tokens, idx, weight, counters);
  }
};

template <class T>
struct CombineKernel {
  TESSERA_KERNEL_CODE void operator()(td::Block blk, td::Context ctx, td::ops::MoeLayout l,
                                      td::ops::MoeWorkspace<T> ws, const T* expert_out, T* y,
                                      std::size_t tokens, td::ops::MoeCounters counters) const {
    td::ops::moe_combine(blk, ctx, l, ws, expert_out, y, tokens, counters);
  }
};

}  // namespace

const char* to_string(MoeDtype dtype) noexcept { return dtype == MoeDtype::f32 ? "f32" : "bf16"; }

MoeBuffer::MoeBuffer(Runtime& rt, const MoeConfig& config) : rt_(&rt), config_(config) {
  // Before the collective checks: a bad TESSERA_CORES throws on every PE alike.
  grid_cap_ = detail::default_blocks(rt, std::max(1, config_.max_blocks));
  check_config(rt, config_);
  const auto n = static_cast<std::size_t>(rt.n_pes());
  local_experts_ = config_.num_experts / rt.n_pes();
  const auto k = static_cast<std::size_t>(config_.topk);
  const auto el = static_cast<std::size_t>(local_experts_);
  if (config_.recv_capacity == 0) config_.recv_capacity = config_.max_tokens_per_pe * n;
  if (config_.expert_capacity == 0) {
    config_.expert_capacity =
        config_.recv_capacity * std::min(k, el) + el * (config_.expert_alignment - 1);
  }
  // Staging holds the tokens received, and in combine the partials of this PE's own tokens
  // (each token from at most min(k, P) PEs).
  staging_rows_ = std::max(config_.recv_capacity, config_.max_tokens_per_pe * std::min(k, n));
  const std::size_t h = config_.hidden, es = element_bytes(config_.dtype);
  const auto blocks = static_cast<std::size_t>(config_.max_blocks);
  const std::size_t record_words = 3 + n + static_cast<std::size_t>(config_.num_experts);
  const std::size_t cursor_words = n + static_cast<std::size_t>(config_.num_experts);
  const std::size_t words = round8(2 * n * record_words) + 4 * round8(n) + 8 +
                            round8(blocks * cursor_words) + td::ops::MoeCounters::kWords;
  words_ = rt.alloc<std::uint64_t>(words);
  detail::zero_heap(rt, words_.get(), words * sizeof(std::uint64_t));
  staging_ = rt.alloc<unsigned char>(staging_rows_ * h * es);
  staging_meta_ = rt.alloc<std::uint32_t>(staging_rows_ * (1 + 2 * k));
  expert_x_ = rt.alloc<unsigned char>(config_.expert_capacity * h * es);
  row_info_ = rt.alloc<std::int32_t>(3 * config_.expert_capacity + staging_rows_ * k +
                                     config_.max_tokens_per_pe * n);
  floats_ = rt.alloc<float>(config_.expert_capacity + blocks * h);
  layout_ = rt.alloc<std::int64_t>(2 * el + 2);
  out_rows_ = rt.alloc<unsigned char>(blocks * h * es);
  detail::zero_heap(rt, layout_.get(), (2 * el + 2) * sizeof(std::int64_t));
  // No peer may signal into the words before every PE has zeroed its own.
  rt.barrier();
}

int MoeBuffer::blocks_for(std::size_t tokens) const {
  if (tokens <= kMoeDecodeTokens) return 1;
  // Prefill: as many blocks as this PE's share of the node's cores (grid_cap_ <= max_blocks).
  return grid_cap_;
}

template <class T>
auto MoeBuffer::kernel_args() const {
  const auto n = static_cast<std::size_t>(rt_->n_pes());
  const auto k = static_cast<std::size_t>(config_.topk);
  td::ops::MoeLayout l;
  l.n_pes = rt_->n_pes();
  l.num_experts = config_.num_experts;
  l.local_experts = local_experts_;
  l.topk = config_.topk;
  l.hidden = config_.hidden;
  l.max_tokens = config_.max_tokens_per_pe;
  l.recv_capacity = config_.recv_capacity;
  l.staging_rows = staging_rows_;
  l.expert_capacity = config_.expert_capacity;
  l.alignment = config_.expert_alignment;
  l.max_blocks = config_.max_blocks;

  td::ops::MoeWorkspace<T> ws;
  std::uint64_t* w = words_.get();
  ws.records = w;
  w += round8(2 * n * l.record_words());
  ws.count_sig = w;
  w += round8(n);
  ws.data_sig = w;
  w += round8(n);
  ws.combine_ready = w;
  w += round8(n);
  ws.combine_sig = w;
  w += round8(n);
  ws.blocks_done = w;
  w += 8;
  ws.cursors = w;
  w += round8(static_cast<std::size_t>(l.max_blocks) * l.cursor_words());
  const auto counters = td::ops::MoeCounters::from_words(w);
  ws.staging = reinterpret_cast<T*>(staging_.get());
  ws.staging_meta = staging_meta_.get();
  ws.expert_x = reinterpret_cast<T*>(expert_x_.get());
  const std::size_t ec = config_.expert_capacity;
  ws.row_src_pe = row_info_.get();
  ws.row_src_token = ws.row_src_pe + ec;
  ws.row_slot = ws.row_src_token + ec;
  ws.recv_expand = ws.row_slot + ec;
  ws.send_pos = ws.recv_expand + staging_rows_ * k;
  ws.row_weight = floats_.get();
  ws.acc = ws.row_weight + ec;
  ws.expert_counts = layout_.get();
  ws.expert_offsets = ws.expert_counts + local_experts_;
  ws.recv_tokens = ws.expert_offsets + local_experts_ + 1;
  ws.out_row = reinterpret_cast<T*>(out_rows_.get());
  return std::tuple{l, ws, counters};
}

template <class T, class Idx>
MoeHandle MoeBuffer::dispatch_typed(Stream& stream, const T* x, std::size_t tokens,
                                    const Idx* topk_idx, const float* topk_weight) {
  const int pe = rt_->pe();
  if (dtype_of<T>() != config_.dtype) {
    fail(pe, std::string("dispatch: x is ") + to_string(dtype_of<T>()) +
                 " but the buffer was made for " + to_string(config_.dtype));
  }
  if (tokens > 0 && (x == nullptr || topk_idx == nullptr || topk_weight == nullptr)) {
    fail(pe, "dispatch: x, topk_idx and topk_weight must not be null when tokens > 0");
  }
  const std::size_t h = config_.hidden;
  const auto [l, ws, counters] = kernel_args<T>();

  // The kernel takes its epoch from the device count (a replayed capture takes a new one); the
  // host's count only orders the handles.
  launch(stream, blocks_for(tokens), DispatchKernel<Idx, T>{}, rt_->device_context(), l, ws, x,
         tokens, topk_idx, topk_weight, counters);

  MoeHandle handle;
  handle.epoch = ++dispatch_epoch_;
  handle.tokens = tokens;
  handle.local_experts = local_experts_;
  handle.hidden = h;
  handle.dtype = config_.dtype;
  handle.expert_x = ws.expert_x;
  handle.expert_counts = ws.expert_counts;
  handle.expert_offsets = ws.expert_offsets;
  handle.src_pe = ws.row_src_pe;
  handle.src_token = ws.row_src_token;
  handle.slot = ws.row_slot;
  handle.weight = ws.row_weight;
  handle.recv_tokens = ws.recv_tokens;
  return handle;
}

template <class T>
void MoeBuffer::combine_typed(Stream& stream, const MoeHandle& handle, const T* expert_out, T* y) {
  const int pe = rt_->pe();
  if (dtype_of<T>() != config_.dtype) {
    fail(pe, std::string("combine: expert_out is ") + to_string(dtype_of<T>()) +
                 " but the buffer was made for " + to_string(config_.dtype));
  }
  if (handle.epoch == 0 || handle.epoch != dispatch_epoch_ ||
      handle.expert_x != static_cast<const void*>(expert_x_.get())) {
    fail(pe, "combine: the handle is not the one of this buffer's latest dispatch (dispatch " +
                 std::to_string(dispatch_epoch_) + ", handle of dispatch " +
                 std::to_string(handle.epoch) + ")");
  }
  if (expert_out == nullptr || (handle.tokens > 0 && y == nullptr)) {
    fail(pe, "combine: expert_out and y must not be null");
  }
  const auto [l, ws, counters] = kernel_args<T>();

  // The kernel combines the device's latest dispatch (the one of `handle`: the check above) and
  // takes its call number on the device.
  launch(stream, blocks_for(handle.tokens), CombineKernel<T>{}, rt_->device_context(), l, ws,
         expert_out, y, handle.tokens, counters);
}

MoeHandle MoeBuffer::dispatch(Stream& stream, const float* x, std::size_t tokens,
                              const std::int32_t* topk_idx, const float* topk_weight) {
  return dispatch_typed(stream, x, tokens, topk_idx, topk_weight);
}
MoeHandle MoeBuffer::dispatch(Stream& stream, const float* x, std::size_t tokens,
                              const std::int64_t* topk_idx, const float* topk_weight) {
  return dispatch_typed(stream, x, tokens, topk_idx, topk_weight);
}
MoeHandle MoeBuffer::dispatch(Stream& stream, const device::bf16* x, std::size_t tokens,
                              const std::int32_t* topk_idx, const float* topk_weight) {
  return dispatch_typed(stream, x, tokens, topk_idx, topk_weight);
}
MoeHandle MoeBuffer::dispatch(Stream& stream, const device::bf16* x, std::size_t tokens,
                              const std::int64_t* topk_idx, const float* topk_weight) {
  return dispatch_typed(stream, x, tokens, topk_idx, topk_weight);
}

void MoeBuffer::combine(Stream& stream, const MoeHandle& handle, const float* expert_out,
                        float* y) {
  combine_typed(stream, handle, expert_out, y);
}
void MoeBuffer::combine(Stream& stream, const MoeHandle& handle, const device::bf16* expert_out,
                        device::bf16* y) {
  combine_typed(stream, handle, expert_out, y);
}

}  // namespace tessera::ops
