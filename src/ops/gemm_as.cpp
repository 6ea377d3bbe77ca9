// gemm_as on the fused GEMM skeleton (ops/fused_gemm.hpp): every PE's column block gathered into
// every PE's workspace (device blocks in <tessera/device/ops/gemm_as.hpp>).
#include "tessera/ops/gemm_as.hpp"

#include <memory>

#include "ops/fused_gemm.hpp"
#include "tessera/device/ops/gemm_as.hpp"

namespace tessera::ops {
namespace {

namespace td = tessera::device;
namespace tdo = tessera::device::ops;

struct GatherColumnsKernel {
  TESSERA_KERNEL_CODE void operator()(td::Block blk, td::Tile<float> c, const float* gathered,
                                      int n_pes, std::size_t n_local) const {
    tdo::gather_columns(blk, c, gathered, n_pes, n_local, blk.block_id(), blk.grid_size());
  }
};

class GemmAsState final : public detail::FusedGemmSchedule<GemmAsState> {
 public:
  static constexpr detail::FusedGemmSpec kSpec{"gemm_as", OpKind::gemm_as, "n_local", "k", "a",
                                               false};
  using FusedGemmSchedule::FusedGemmSchedule;

  // The workspace: the gathered blocks (n_pes x m x n_local floats) and, pipelined, the words
  // [ready: T][flags: n_pes * T][consumed: n_pes][readers: 1] (T tiles of a block).
  void prepare(const GemmAsOptions&) {
    resolve_options();
    const auto p = static_cast<std::size_t>(rt.n_pes());
    gathered_ = rt.alloc<float>(p * m * n);
    if (overlap.pattern == OverlapPattern::bulk_synchronous) {
      allocate_words(gather_words(rt.n_pes()));
      return;
    }
    const std::size_t tiles =
        ((m + options.tile_m - 1) / options.tile_m) * ((n + options.tile_n - 1) / options.tile_n);
    allocate_words(tiles * (p + 1) + p + 1);
  }

  template <class T>
  void enqueue(Stream& stream, const T* a, const T* b, float* c) {
    const int pe = rt.pe(), n_pes = rt.n_pes();
    const td::Tile<const T> ta(a, m, k), tb(b, k, n);
    const td::Tile<float> tc(c, m, n * static_cast<std::size_t>(n_pes));
    const std::size_t block = m * n;
    float* mine = gathered_.get() + static_cast<std::size_t>(pe) * block;
    if (overlap.pattern == OverlapPattern::bulk_synchronous) {
      // The GEMM into this PE's slot, the all-gather in place (on the op's words and count), the
      // columns into c.
      gemm_tiles(stream, td::Tile<float>(mine, m, n), ta, tb);
      all_gather(stream, mine, gathered_.get(), block * sizeof(float));
      launch(stream, n_pes < options.compute_blocks ? n_pes : options.compute_blocks,
             GatherColumnsKernel{}, tc, static_cast<const float*>(gathered_.get()), n_pes, n);
      return;
    }
    tdo::GemmAsArgs<T, T> args;
    args.a = ta;
    args.b = tb;
    args.c = tc;
    args.gathered = gathered_.get();
    args.tile_m = options.tile_m;
    args.tile_n = options.tile_n;
    args.pull = overlap.direction == CommDirection::pull;
    const std::size_t tiles = args.tiles();
    std::uint64_t* w = words.get();
    args.flags = w + tiles;
    args.words = next_words(w, w + tiles * (static_cast<std::size_t>(n_pes) + 1));
    launch_pipelined(stream, args);
  }

 private:
  Symmetric<float> gathered_;  // n_pes x m x n_local: slot p holds PE p's block
};

}  // namespace

GemmAs::GemmAs(Runtime& rt, std::size_t m, std::size_t n_local, std::size_t k, GemmDtype dtype,
               const GemmAsOptions& options)
    : FusedGemm(detail::make_fused_gemm<GemmAsState>(rt, m, n_local, k, dtype, options)) {}

}  // namespace tessera::ops
