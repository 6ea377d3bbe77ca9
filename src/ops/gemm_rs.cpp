// gemm_rs on the fused GEMM skeleton (ops/fused_gemm.hpp): fused_sequential with push runs its
// own kernel (<tessera/device/ops/gemm_rs.hpp>: every block computes, publishes and sums), every
// other pattern the row-owned reduction of gemm_ar keeping this PE's shard (ops/row_reduce.hpp).
#include "tessera/ops/gemm_rs.hpp"

#include <memory>
#include <string>

#include "ops/fused_gemm.hpp"
#include "ops/heap_fill.hpp"
#include "ops/row_reduce.hpp"
#include "tessera/device/ops/gemm_rs.hpp"

namespace tessera::ops {
namespace {

namespace td = tessera::device;
namespace tdo = tessera::device::ops;

class GemmRsState final : public detail::FusedGemmSchedule<GemmRsState> {
 public:
  // fused_sequential with push: every block computes, publishes and sums its tiles, the call's
  // epoch taken on the device from `epoch` (public: a GPU kernel's type argument may not be a
  // private member type).
  struct Kernel {
    template <class TA, class TB>
    TESSERA_KERNEL_CODE void operator()(td::Block blk, td::Context ctx,
                                        tdo::GemmRsArgs<TA, TB> args, td::DeviceEpoch epoch) const {
      args.epoch = epoch.next_in_grid(blk);
      tdo::gemm_rs(blk, ctx, args, blk.block_id());
    }
  };

  static constexpr detail::FusedGemmSpec kSpec{"gemm_rs", OpKind::gemm_rs, "n", "k_local", "a",
                                               true};
  using FusedGemmSchedule::FusedGemmSchedule;

  void prepare(const GemmRsOptions&) {
    if (options.compute_blocks < 1) {
      bad("compute_blocks must be at least 1, got " + std::to_string(options.compute_blocks));
    }
    if (options.comm_blocks < 1) {
      bad("comm_blocks must be at least 1, got " + std::to_string(options.comm_blocks));
    }
    // fused_sequential with push is the kernel gemm_rs had before patterns existed: asked for
    // without a direction, it keeps push whatever the transport.
    CommDirection direction = options.direction;
    if (options.pattern == OverlapPattern::fused_sequential &&
        direction == CommDirection::automatic) {
      direction = CommDirection::push;
    }
    overlap = resolve(direction);
    if (!own_kernel()) {
      reduce_.allocate(*this, shard_rows(), false);
      return;
    }
    // [tile flags: n_pes * tiles][consumed: n_pes][readers_done: 1]
    slots_ = rt.alloc<float>(m * n);
    scratch_ = rt.alloc<float>(static_cast<std::size_t>(options.compute_blocks) * options.tile_m *
                               options.tile_n);
    const std::size_t tiles = ((shard_rows() + options.tile_m - 1) / options.tile_m) *
                              ((n + options.tile_n - 1) / options.tile_n);
    allocate_words(static_cast<std::size_t>(rt.n_pes()) * (tiles + 1) + 1);
  }

  template <class T>
  void enqueue(Stream& stream, const T* a, const T* b, float* c) {
    if (!own_kernel()) {
      reduce_.enqueue(*this, stream, a, b, c);
      return;
    }
    tdo::GemmRsArgs<T, T> args;
    args.a = td::Tile<const T>(a, m, k);
    args.b = td::Tile<const T>(b, k, n);
    args.c = td::Tile<float>(c, shard_rows(), n);
    args.slots = slots_.get();
    args.scratch = scratch_.get();
    args.tile_m = options.tile_m;
    args.tile_n = options.tile_n;
    args.compute_blocks = options.compute_blocks;
    args.tile_flags = words.get();
    args.consumed = args.tile_flags + static_cast<std::size_t>(rt.n_pes()) * args.tiles_per_shard();
    args.readers_done = args.consumed + rt.n_pes();
    args.epoch = 0;  // taken on the device (main_epoch)
    args.comm_delay_us = options.comm_delay_us;
    launch(stream, options.compute_blocks, Kernel{}, rt.device_context(), args, main_epoch());
  }

 private:
  bool own_kernel() const {
    return overlap.pattern == OverlapPattern::fused_sequential &&
           overlap.direction == CommDirection::push;
  }
  std::size_t shard_rows() const { return m / static_cast<std::size_t>(rt.n_pes()); }

  detail::RowReduce reduce_;  // every pattern but fused_sequential with push
  Symmetric<float> slots_;    // fused_sequential with push: the partials' slots (m x n floats)
  Symmetric<float> scratch_;  // per-block staging for unmapped owners
};

}  // namespace

GemmRs::GemmRs(Runtime& rt, std::size_t m, std::size_t n, std::size_t k_local, GemmDtype dtype,
               const GemmRsOptions& options)
    : FusedGemm(detail::make_fused_gemm<GemmRsState>(rt, m, n, k_local, dtype, options)) {}

}  // namespace tessera::ops
