// Host launcher of ag_gemm: workspace, argument checks, epochs, and the kernel made of the
// device building blocks.
#include "tessera/ops/ag_gemm.hpp"

#include <string>

#include "ops/heap_fill.hpp"
#include "ops/overlap_support.hpp"
#include "tessera/device/context.hpp"
#include "tessera/device/ops/ag_gemm.hpp"
#include "tessera/error.hpp"
#include "tessera/launch.hpp"
#include "tessera/ops/all_gather.hpp"

namespace tessera::ops {
namespace {

namespace td = tessera::device;
namespace tdo = tessera::device::ops;

[[noreturn]] void bad(int pe, const std::string& message) {
  throw Error(ErrorCode::invalid_argument, pe, "ag_gemm: " + message);
}

struct AgGemmKernel {
  template <class TA, class TB>
  TESSERA_KERNEL_CODE void operator()(td::Block blk, td::Context ctx, tdo::AgGemmArgs<TA, TB> args,
                                      int comm_blocks) const {
    tdo::ag_gemm(blk, ctx, args, comm_blocks);
  }
};

struct AgGemmCommunicateKernel {
  template <class TA, class TB>
  TESSERA_KERNEL_CODE void operator()(td::Block blk, td::Context ctx,
                                      tdo::AgGemmArgs<TA, TB> args) const {
    tdo::ag_gemm_communicate(blk, ctx, args, blk.block_id(), blk.grid_size());
  }
};

struct AgGemmComputeKernel {
  template <class TA, class TB>
  TESSERA_KERNEL_CODE void operator()(td::Block blk, td::Context ctx,
                                      tdo::AgGemmArgs<TA, TB> args) const {
    tdo::ag_gemm_compute(blk, ctx, args, blk.block_id());
  }
};

struct AgGemmFusedKernel {
  template <class TA, class TB>
  TESSERA_KERNEL_CODE void operator()(td::Block blk, td::Context ctx,
                                      tdo::AgGemmArgs<TA, TB> args) const {
    tdo::ag_gemm_fused(blk, ctx, args);
  }
};

bool all_mapped(const td::Context& ctx) { return detail::all_peers_mapped(ctx); }

}  // namespace

const char* to_string(AgGemmVariant variant) noexcept {
  switch (variant) {
    case AgGemmVariant::automatic:
      return "automatic";
    case AgGemmVariant::push:
      return "push";
    case AgGemmVariant::pull:
      return "pull";
  }
  return "?";
}

AgGemm::AgGemm(Runtime& rt, std::size_t m, std::size_t n_local, std::size_t k, GemmDtype dtype,
               const AgGemmOptions& requested)
    : rt_(&rt), m_(m), n_local_(n_local), k_(k), dtype_(dtype), options_(requested) {
  const AgGemmOptions& options = options_;  // its tile resolved below
  const int pe = rt.pe(), n_pes = rt.n_pes();
  if (m == 0 || n_local == 0 || k == 0) {
    bad(pe, "shape must be non-zero, got m=" + std::to_string(m) +
                " n_local=" + std::to_string(n_local) + " k=" + std::to_string(k));
  }
  if (m % static_cast<std::size_t>(n_pes) != 0) {
    bad(pe, "m=" + std::to_string(m) + " must be a multiple of the number of PEs (" +
                std::to_string(n_pes) + ")");
  }
  if (options.comm_blocks < 1 || options.compute_blocks < 1) {
    bad(pe, "comm_blocks and compute_blocks must be at least 1, got " +
                std::to_string(options.comm_blocks) + " and " +
                std::to_string(options.compute_blocks));
  }
  detail::resolve_gemm_tile(rt, "ag_gemm", options_.tile_m, options_.tile_n, m, n_local);
  if (options.chunk_rows == 0) bad(pe, "chunk_rows must be at least 1");
  const td::Context ctx = rt.device_context();
  pattern_ = options.pattern;
  if (pattern_ == OverlapPattern::automatic) {
    // A variant the caller fixed asks for a fused pattern: bulk_synchronous has none.
    pattern_ = options.variant == AgGemmVariant::automatic || !all_mapped(ctx)
                   ? resolve_overlap(OpKind::ag_gemm, m, n_local, k, n_pes, all_mapped(ctx))
                   : resolve_fused_overlap(OpKind::ag_gemm, m, n_local, k, n_pes);
  }
  variant_ = options.variant;
  if (pattern_ == OverlapPattern::bulk_synchronous) {
    // ops::all_gather pushes the shards into the gathered copy.
    if (variant_ != AgGemmVariant::automatic) {
      bad(pe, std::string("variant ") + to_string(variant_) +
                  " does not apply to bulk_synchronous (its all_gather picks the algorithm); "
                  "pass AgGemmVariant::automatic");
    }
    gathered_ = rt.alloc<unsigned char>(m * k * (dtype == GemmDtype::f32 ? 4 : 2));
    variant_ = AgGemmVariant::push;
    return;
  }
  if (variant_ == AgGemmVariant::automatic) {
    variant_ = all_mapped(ctx) ? AgGemmVariant::pull : AgGemmVariant::push;
  } else if (variant_ == AgGemmVariant::pull && !all_mapped(ctx)) {
    throw Error(ErrorCode::transport, pe,
                "ag_gemm: the pull variant needs every peer's heap mapped on PE " +
                    std::to_string(pe) + "; use push (or automatic) across nodes");
  }
  const std::size_t elem = dtype == GemmDtype::f32 ? sizeof(float) : sizeof(td::bf16);
  const std::size_t m_local = m / static_cast<std::size_t>(n_pes);
  const std::size_t chunks = (m_local + options.chunk_rows - 1) / options.chunk_rows;
  if (variant_ == AgGemmVariant::push) {
    gathered_ = rt.alloc<unsigned char>(m * k * elem);
  } else {
    staging_ = rt.alloc<unsigned char>(m_local * k * elem);
  }
  // [chunk flags: n_pes * chunks][ready: n_pes][consumed: n_pes][readers_done: 1]
  const std::size_t words = static_cast<std::size_t>(n_pes) * (chunks + 2) + 1;
  words_ = rt.alloc<std::uint64_t>(words);
  detail::zero_heap(rt, words_.get(), words * sizeof(std::uint64_t));
  if (pattern_ == OverlapPattern::producer_consumer) comm_ = detail::make_comm_stream(rt);
  rt.barrier();  // every PE's words are zero before any peer signals into them
}

void AgGemm::run(Stream& stream, const float* a_shard, const float* b, float* c) {
  run_typed(stream, a_shard, b, c);
}

void AgGemm::run(Stream& stream, const device::bf16* a_shard, const device::bf16* b, float* c) {
  run_typed(stream, a_shard, b, c);
}

template <class T>
void AgGemm::run_typed(Stream& stream, const T* a_shard, const T* b, float* c) {
  const int pe = rt_->pe(), n_pes = rt_->n_pes();
  detail::check_gemm_run("ag_gemm", pe, dtype_,
                         std::is_same_v<T, float> ? GemmDtype::f32 : GemmDtype::bf16, "a_shard",
                         a_shard, b, c);
  const std::size_t m_local = m_ / static_cast<std::size_t>(n_pes);
  const std::size_t a_bytes = m_local * k_ * sizeof(T);
  const bool a_in_heap = rt_->in_heap(a_shard);
  if (a_in_heap && !rt_->in_heap(a_shard, a_bytes)) {
    bad(pe, "a_shard starts in the symmetric heap but its " + std::to_string(a_bytes) +
                " bytes run past the heap's end");
  }
  const td::Context ctx = rt_->device_context();
  if (pattern_ == OverlapPattern::bulk_synchronous) {
    // The library all-gather into the gathered copy, then the GEMM over it.
    T* gathered = reinterpret_cast<T*>(gathered_.get());
    all_gather(*rt_, stream, a_shard, gathered, a_bytes);
    launch(stream, options_.compute_blocks, detail::GemmTilesKernel{},
           td::Tile<float>(c, m_, n_local_), td::Tile<const T>(gathered, m_, k_),
           td::Tile<const T>(b, k_, n_local_), options_.tile_m, options_.tile_n);
    return;
  }
  const std::size_t chunks = (m_local + options_.chunk_rows - 1) / options_.chunk_rows;
  std::uint64_t* words = words_.get();

  const T* shard = a_shard;
  if (variant_ == AgGemmVariant::pull && !a_in_heap) {
    // Peers read the shard in place, so it must be in the heap: stage it. The previous call's
    // kernel has returned, and it waits for every peer to finish reading, so this copy is safe.
    T* stage = reinterpret_cast<T*>(staging_.get());
    detail::copy_on_stream(stream, stage, a_shard, a_bytes);
    shard = stage;
  }

  tdo::AgGemmArgs<T, T> args;
  args.a_shard = td::Tile<const T>(shard, m_local, k_);
  args.b = td::Tile<const T>(b, k_, n_local_);
  args.c = td::Tile<float>(c, m_, n_local_);
  args.gathered = reinterpret_cast<T*>(gathered_.get());
  args.chunk_flags = words;
  args.ready = words + static_cast<std::size_t>(n_pes) * chunks;
  args.consumed = args.ready + n_pes;
  args.readers_done = args.consumed + n_pes;
  args.algo = variant_ == AgGemmVariant::pull ? tdo::AgGemmAlgo::pull : tdo::AgGemmAlgo::push;
  args.tile_m = options_.tile_m;
  args.tile_n = options_.tile_n;
  args.chunk_rows = options_.chunk_rows;
  args.compute_blocks = options_.compute_blocks;
  args.epoch = ++epoch_;
  args.comm_delay_us = options_.comm_delay_us;
  switch (pattern_) {
    case OverlapPattern::producer_consumer:
      // The shard (or its staged copy) is ready once the caller's stream gets here.
      comm_->wait_for(stream);
      launch(*comm_, options_.comm_blocks, AgGemmCommunicateKernel{}, ctx, args);
      launch(stream, options_.compute_blocks, AgGemmComputeKernel{}, ctx, args);
      stream.wait_for(*comm_);
      return;
    case OverlapPattern::fused_sequential:
      launch(stream, options_.compute_blocks, AgGemmFusedKernel{}, ctx, args);
      return;
    default:
      launch(stream, options_.comm_blocks + options_.compute_blocks, AgGemmKernel{}, ctx, args,
             options_.comm_blocks);
      return;
  }
}

}  // namespace tessera::ops
