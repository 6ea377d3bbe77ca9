// ag_gemm on the fused GEMM skeleton (ops/fused_gemm.hpp): the gather of A's shards, chunk by
// chunk, into (push) or read from (pull) every PE, the GEMM consuming chunks as they land (device
// blocks in <tessera/device/ops/ag_gemm.hpp>).
#include "tessera/ops/ag_gemm.hpp"

#include <memory>
#include <string>

#include "ops/fused_gemm.hpp"
#include "ops/heap_fill.hpp"
#include "tessera/device/ops/ag_gemm.hpp"
#include "tessera/error.hpp"

namespace tessera::ops {
namespace {

namespace td = tessera::device;
namespace tdo = tessera::device::ops;

// Each kernel takes the call's epoch on the device from `epoch` (every block of the grid the
// same: next_in_grid) into its copy of args, so a captured launch takes a new one each replay.
struct AgGemmKernel {
  template <class TA, class TB>
  TESSERA_KERNEL_CODE void operator()(td::Block blk, td::Context ctx, tdo::AgGemmArgs<TA, TB> args,
                                      td::DeviceEpoch epoch, int comm_blocks) const {
    args.epoch = epoch.next_in_grid(blk);
    tdo::ag_gemm(blk, ctx, args, comm_blocks);
  }
};

struct AgGemmCommunicateKernel {
  template <class TA, class TB>
  TESSERA_KERNEL_CODE void operator()(td::Block blk, td::Context ctx, tdo::AgGemmArgs<TA, TB> args,
                                      td::DeviceEpoch epoch) const {
    args.epoch = epoch.next_in_grid(blk);
    tdo::ag_gemm_communicate(blk, ctx, args, blk.block_id(), blk.grid_size());
  }
};

struct AgGemmComputeKernel {
  template <class TA, class TB>
  TESSERA_KERNEL_CODE void operator()(td::Block blk, td::Context ctx, tdo::AgGemmArgs<TA, TB> args,
                                      td::DeviceEpoch epoch) const {
    args.epoch = epoch.next_in_grid(blk);
    tdo::ag_gemm_compute(blk, ctx, args, blk.block_id());
  }
};

struct AgGemmFusedKernel {
  template <class TA, class TB>
  TESSERA_KERNEL_CODE void operator()(td::Block blk, td::Context ctx, tdo::AgGemmArgs<TA, TB> args,
                                      td::DeviceEpoch epoch) const {
    args.epoch = epoch.next_in_grid(blk);
    tdo::ag_gemm_fused(blk, ctx, args);
  }
};

AgGemmVariant variant_of(CommDirection direction) {
  return direction == CommDirection::push   ? AgGemmVariant::push
         : direction == CommDirection::pull ? AgGemmVariant::pull
                                            : AgGemmVariant::automatic;
}

class AgGemmState final : public detail::FusedGemmSchedule<AgGemmState> {
 public:
  static constexpr detail::FusedGemmSpec kSpec{"ag_gemm", OpKind::ag_gemm, "n_local",
                                               "k",       "a_shard",       true};
  using FusedGemmSchedule::FusedGemmSchedule;

  // The workspace: push: the gathered A (m x k elements); pull: a staging copy of the shard;
  // the words [chunk flags: n_pes * chunks][ready: n_pes][consumed: n_pes][readers_done: 1].
  void prepare(const AgGemmOptions& requested) {
    chunk_rows_ = requested.chunk_rows;
    variant_ = requested.variant;
    check_blocks();
    if (chunk_rows_ == 0) bad("chunk_rows must be at least 1");
    const AgGemmVariant named = variant_of(options.direction);
    if (named != AgGemmVariant::automatic) {
      if (variant_ != AgGemmVariant::automatic && variant_ != named) {
        bad(std::string("variant ") + to_string(variant_) + " and direction " +
            to_string(options.direction) + " disagree (they name the same choice: pass one)");
      }
      variant_ = named;
    }
    const int n_pes = rt.n_pes();
    const bool mapped = detail::all_peers_mapped(rt.device_context());
    overlap.pattern = options.pattern;
    if (overlap.pattern == OverlapPattern::automatic) {
      // A variant the caller fixed asks for a fused pattern: bulk_synchronous has none.
      overlap.pattern = variant_ == AgGemmVariant::automatic || !mapped
                            ? resolve_overlap(OpKind::ag_gemm, m, n, k, n_pes, mapped)
                            : resolve_fused_overlap(OpKind::ag_gemm, m, n, k, n_pes);
    }
    const std::size_t elem = dtype == GemmDtype::f32 ? sizeof(float) : sizeof(td::bf16);
    if (overlap.pattern == OverlapPattern::bulk_synchronous) {
      // ops::all_gather pushes the shards into the gathered copy.
      if (variant_ != AgGemmVariant::automatic) {
        bad(std::string("variant ") + to_string(variant_) +
            " does not apply to bulk_synchronous (its all_gather picks the algorithm); "
            "pass AgGemmVariant::automatic");
      }
      gathered_ = rt.alloc<unsigned char>(m * k * elem);
      variant_ = AgGemmVariant::push;
      allocate_words(gather_words(n_pes));
      return;
    }
    if (variant_ == AgGemmVariant::automatic) {
      variant_ = mapped ? AgGemmVariant::pull : AgGemmVariant::push;
    } else if (variant_ == AgGemmVariant::pull && !mapped) {
      throw Error(ErrorCode::transport, rt.pe(),
                  "ag_gemm: the pull variant needs every peer's heap mapped on PE " +
                      std::to_string(rt.pe()) + "; use push (or automatic) across nodes");
    }
    overlap.direction = variant_ == AgGemmVariant::pull ? CommDirection::pull : CommDirection::push;
    if (variant_ == AgGemmVariant::push) {
      gathered_ = rt.alloc<unsigned char>(m * k * elem);
    } else {
      staging_ = rt.alloc<unsigned char>(shard_rows() * k * elem);
    }
    allocate_words(static_cast<std::size_t>(n_pes) * (chunks() + 2) + 1);
  }

  template <class T>
  void enqueue(Stream& stream, const T* a_shard, const T* b, float* c) {
    const std::size_t a_bytes = shard_rows() * k * sizeof(T);
    const bool a_in_heap = rt.in_heap(a_shard);
    if (a_in_heap && !rt.in_heap(a_shard, a_bytes)) {
      bad("a_shard starts in the symmetric heap but its " + std::to_string(a_bytes) +
          " bytes run past the heap's end");
    }
    T* gathered = reinterpret_cast<T*>(gathered_.get());
    if (overlap.pattern == OverlapPattern::bulk_synchronous) {
      // The all-gather into the gathered copy (on the op's words and count), then the GEMM.
      all_gather(stream, a_shard, gathered, a_bytes);
      gemm_tiles(stream, td::Tile<float>(c, m, n), td::Tile<const T>(gathered, m, k),
                 td::Tile<const T>(b, k, n));
      return;
    }
    const T* shard = a_shard;
    if (variant_ == AgGemmVariant::pull && !a_in_heap) {
      // Peers read the shard in place, so it must be in the heap: stage it. The previous call's
      // kernel has returned, and it waits for every peer to finish reading, so this copy is safe.
      T* stage = reinterpret_cast<T*>(staging_.get());
      detail::copy_on_stream(stream, stage, a_shard, a_bytes);
      shard = stage;
    }
    const int n_pes = rt.n_pes();
    std::uint64_t* w = words.get();
    tdo::AgGemmArgs<T, T> args;
    args.a_shard = td::Tile<const T>(shard, shard_rows(), k);
    args.b = td::Tile<const T>(b, k, n);
    args.c = td::Tile<float>(c, m, n);
    args.gathered = gathered;
    args.chunk_flags = w;
    args.ready = w + static_cast<std::size_t>(n_pes) * chunks();
    args.consumed = args.ready + n_pes;
    args.readers_done = args.consumed + n_pes;
    args.algo = variant_ == AgGemmVariant::pull ? tdo::AgGemmAlgo::pull : tdo::AgGemmAlgo::push;
    args.tile_m = options.tile_m;
    args.tile_n = options.tile_n;
    args.chunk_rows = chunk_rows_;
    args.compute_blocks = options.compute_blocks;
    args.epoch = 0;  // taken on the device (main_epoch, comm_epoch)
    args.comm_delay_us = options.comm_delay_us;
    const td::Context ctx = rt.device_context();
    switch (overlap.pattern) {
      case OverlapPattern::producer_consumer:
        // The shard (or its staged copy) is ready once the caller's stream gets here. Each
        // kernel advances its own count, once a call: they agree on the epoch.
        comm->wait_for(stream);
        launch(*comm, options.comm_blocks, AgGemmCommunicateKernel{}, ctx, args, comm_epoch());
        launch(stream, options.compute_blocks, AgGemmComputeKernel{}, ctx, args, main_epoch());
        stream.wait_for(*comm);
        return;
      case OverlapPattern::fused_sequential:
        launch(stream, options.compute_blocks, AgGemmFusedKernel{}, ctx, args, main_epoch());
        return;
      default:
        launch(stream, options.comm_blocks + options.compute_blocks, AgGemmKernel{}, ctx, args,
               main_epoch(), options.comm_blocks);
        return;
    }
  }

  AgGemmVariant variant() const { return variant_; }
  const void* gathered_a() const { return gathered_.get(); }

 private:
  std::size_t shard_rows() const { return m / static_cast<std::size_t>(rt.n_pes()); }
  std::size_t chunks() const { return (shard_rows() + chunk_rows_ - 1) / chunk_rows_; }

  std::size_t chunk_rows_ = 0;
  AgGemmVariant variant_ = AgGemmVariant::automatic;
  Symmetric<unsigned char> gathered_;  // push (and bulk_synchronous)
  Symmetric<unsigned char> staging_;   // pull: a_shard copied here when it is not in the heap
};

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
               const AgGemmOptions& options)
    : FusedGemm(detail::make_fused_gemm<AgGemmState>(rt, m, n_local, k, dtype, options)) {}

AgGemmVariant AgGemm::variant() const { return static_cast<const AgGemmState&>(*state_).variant(); }
const void* AgGemm::gathered_a() const {
  return static_cast<const AgGemmState&>(*state_).gathered_a();
}

}  // namespace tessera::ops
