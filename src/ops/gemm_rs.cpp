// Host launcher of gemm_rs: workspace, argument checks, epochs, and the kernel made of the
// device building block.
#include "tessera/ops/gemm_rs.hpp"

#include <string>
#include <type_traits>

#include "ops/heap_fill.hpp"
#include "ops/overlap_support.hpp"
#include "tessera/device/context.hpp"
#include "tessera/device/ops/gemm_ar.hpp"
#include "tessera/device/ops/gemm_rs.hpp"
#include "tessera/error.hpp"
#include "tessera/launch.hpp"
#include "tessera/ops/all_reduce.hpp"

namespace tessera::ops {
namespace {

namespace td = tessera::device;
namespace tdo = tessera::device::ops;

[[noreturn]] void bad(int pe, const std::string& message) {
  throw Error(ErrorCode::invalid_argument, pe, "gemm_rs: " + message);
}

struct GemmRsKernel {
  template <class TA, class TB>
  TESSERA_KERNEL_CODE void operator()(td::Block blk, td::Context ctx,
                                      tdo::GemmRsArgs<TA, TB> args) const {
    tdo::gemm_rs(blk, ctx, args, blk.block_id());
  }
};

}  // namespace

GemmRs::GemmRs(Runtime& rt, std::size_t m, std::size_t n, std::size_t k_local, GemmDtype dtype,
               const GemmRsOptions& requested)
    : rt_(&rt), m_(m), n_(n), k_local_(k_local), dtype_(dtype), options_(requested) {
  const GemmRsOptions& options = options_;  // its tile resolved below
  const int pe = rt.pe(), n_pes = rt.n_pes();
  if (m == 0 || n == 0 || k_local == 0) {
    bad(pe, "shape must be non-zero, got m=" + std::to_string(m) + " n=" + std::to_string(n) +
                " k_local=" + std::to_string(k_local));
  }
  if (m % static_cast<std::size_t>(n_pes) != 0) {
    bad(pe, "m=" + std::to_string(m) + " must be a multiple of the number of PEs (" +
                std::to_string(n_pes) + ")");
  }
  if (options.compute_blocks < 1) {
    bad(pe, "compute_blocks must be at least 1, got " + std::to_string(options.compute_blocks));
  }
  detail::resolve_gemm_tile(rt, "gemm_rs", options_.tile_m, options_.tile_n, m, n);
  if (options.comm_blocks < 1) {
    bad(pe, "comm_blocks must be at least 1, got " + std::to_string(options.comm_blocks));
  }
  // fused_sequential with push is the kernel gemm_rs had before patterns existed: asked for
  // without a direction, it keeps push whatever the transport; every other combination runs the
  // gemm_ar blocks.
  CommDirection direction = options.direction;
  if (options.pattern == OverlapPattern::fused_sequential &&
      direction == CommDirection::automatic) {
    direction = CommDirection::push;
  }
  const detail::ResolvedOverlap overlap =
      detail::resolve_fused(rt, OpKind::gemm_rs, options.pattern, direction, m, n, k_local);
  pattern_ = overlap.pattern;
  direction_ = overlap.direction;
  const std::size_t m_local = m / static_cast<std::size_t>(n_pes);
  if (pattern_ == OverlapPattern::bulk_synchronous) {
    partial_ = rt.alloc<float>(m * n);
    team_ = &detail::fused_world_team(rt);
    return;
  }
  if (pattern_ != OverlapPattern::fused_sequential || direction_ != CommDirection::push) {
    const auto p = static_cast<std::size_t>(n_pes);
    const std::size_t per_shard = ((m_local + options.tile_m - 1) / options.tile_m) *
                                  ((n + options.tile_n - 1) / options.tile_n);
    const std::size_t tiles = p * per_shard;
    partial_ = rt.alloc<float>(m * n);
    if (direction_ == CommDirection::push) {
      pipe_slots_ = rt.alloc<float>(tiles * options.tile_m * options.tile_n);
    }
    const std::size_t words = 3 * tiles + p + 1;
    pipe_words_ = rt.alloc<std::uint64_t>(words);
    detail::zero_heap(rt, pipe_words_.get(), words * sizeof(std::uint64_t));
    if (pattern_ == OverlapPattern::producer_consumer) comm_ = detail::make_comm_stream(rt);
    rt.barrier();  // every PE's words are zero before any peer signals into them
    return;
  }
  const std::size_t tiles = ((m_local + options.tile_m - 1) / options.tile_m) *
                            ((n + options.tile_n - 1) / options.tile_n);
  slots_ = rt.alloc<float>(m * n);
  scratch_ = rt.alloc<float>(static_cast<std::size_t>(options.compute_blocks) * options.tile_m *
                             options.tile_n);
  // [tile flags: n_pes * tiles][consumed: n_pes][readers_done: 1]
  const std::size_t words = static_cast<std::size_t>(n_pes) * (tiles + 1) + 1;
  words_ = rt.alloc<std::uint64_t>(words);
  detail::zero_heap(rt, words_.get(), words * sizeof(std::uint64_t));
  rt.barrier();  // every PE's words are zero before any peer signals into them
}

void GemmRs::run(Stream& stream, const float* a, const float* b, float* c) {
  run_typed(stream, a, b, c);
}

void GemmRs::run(Stream& stream, const device::bf16* a, const device::bf16* b, float* c) {
  run_typed(stream, a, b, c);
}

template <class T>
void GemmRs::run_typed(Stream& stream, const T* a, const T* b, float* c) {
  const int pe = rt_->pe(), n_pes = rt_->n_pes();
  detail::check_gemm_run("gemm_rs", pe, dtype_,
                         std::is_same_v<T, float> ? GemmDtype::f32 : GemmDtype::bf16, "a", a, b, c);
  const std::size_t m_local = m_ / static_cast<std::size_t>(n_pes);
  const td::Context ctx = rt_->device_context();
  if (pattern_ == OverlapPattern::bulk_synchronous) {
    // The GEMM into the workspace, the library all-reduce in place (ops::reduce_scatter once it
    // exists would move half the bytes), then this PE's rows into c.
    launch(stream, options_.compute_blocks, detail::GemmTilesKernel{},
           td::Tile<float>(partial_.get(), m_, n_), td::Tile<const T>(a, m_, k_local_),
           td::Tile<const T>(b, k_local_, n_), options_.tile_m, options_.tile_n);
    all_reduce(*rt_, stream, *team_, partial_.get(), partial_.get(), m_ * n_, Dtype::f32,
               ReduceOp::sum);
    tessera::detail::copy_on_stream(stream, c,
                                    partial_.get() + static_cast<std::size_t>(pe) * m_local * n_,
                                    m_local * n_ * sizeof(float));
    return;
  }
  if (pipe_words_.get() != nullptr) {
    const std::size_t p = static_cast<std::size_t>(n_pes);
    tdo::GemmArArgs<T, T> pipe;
    pipe.a = td::Tile<const T>(a, m_, k_local_);
    pipe.b = td::Tile<const T>(b, k_local_, n_);
    pipe.c = td::Tile<float>(c, m_local, n_);
    pipe.partial = partial_.get();
    pipe.slots = pipe_slots_.get();
    pipe.shard_rows = m_local;
    pipe.tile_m = options_.tile_m;
    pipe.tile_n = options_.tile_n;
    const std::size_t tiles = p * pipe.per_shard();
    std::uint64_t* w = pipe_words_.get();
    pipe.words.ready = w;
    pipe.part_flags = w + tiles;
    pipe.sum_flags = w + 2 * tiles;
    pipe.words.consumed = w + 3 * tiles;
    pipe.words.readers_done = pipe.words.consumed + n_pes;
    pipe.words.groups =
        detail::overlap_groups(pattern_, options_.comm_blocks, options_.compute_blocks);
    pipe.words.epoch = ++epoch_;
    pipe.words.comm_delay_us = options_.comm_delay_us;
    pipe.pull = direction_ == CommDirection::pull;
    pipe.all_rows = false;
    detail::launch_pipelined(stream, comm_.get(), pattern_, ctx, pipe, options_.comm_blocks,
                             options_.compute_blocks);
    return;
  }
  tdo::GemmRsArgs<T, T> args;
  args.a = td::Tile<const T>(a, m_, k_local_);
  args.b = td::Tile<const T>(b, k_local_, n_);
  args.c = td::Tile<float>(c, m_local, n_);
  args.slots = slots_.get();
  args.scratch = scratch_.get();
  args.tile_m = options_.tile_m;
  args.tile_n = options_.tile_n;
  args.compute_blocks = options_.compute_blocks;
  args.tile_flags = words_.get();
  args.consumed = args.tile_flags + static_cast<std::size_t>(n_pes) * args.tiles_per_shard();
  args.readers_done = args.consumed + n_pes;
  args.epoch = ++epoch_;
  args.comm_delay_us = options_.comm_delay_us;
  launch(stream, options_.compute_blocks, GemmRsKernel{}, ctx, args);
}

}  // namespace tessera::ops
