// Host launcher of gemm_as: pattern and direction, workspace, argument checks, epochs, and the
// kernels of each pattern (device blocks in <tessera/device/ops/gemm_as.hpp>).
#include "tessera/ops/gemm_as.hpp"

#include <string>
#include <type_traits>

#include "ops/heap_fill.hpp"
#include "ops/overlap_support.hpp"
#include "tessera/device/context.hpp"
#include "tessera/device/ops/gemm_as.hpp"
#include "tessera/error.hpp"
#include "tessera/heap.hpp"
#include "tessera/launch.hpp"
#include "tessera/ops/all_gather.hpp"

namespace tessera::ops {
namespace {

namespace td = tessera::device;
namespace tdo = tessera::device::ops;

[[noreturn]] void bad(int pe, const std::string& message) {
  throw Error(ErrorCode::invalid_argument, pe, "gemm_as: " + message);
}

struct GatherColumnsKernel {
  TESSERA_KERNEL_CODE void operator()(td::Block blk, td::Tile<float> c, const float* gathered,
                                      int n_pes, std::size_t n_local) const {
    tdo::gather_columns(blk, c, gathered, n_pes, n_local, blk.block_id(), blk.grid_size());
  }
};

}  // namespace

struct GemmAs::State {
  Runtime* rt;
  std::size_t m, n_local, k;
  GemmDtype dtype;
  GemmAsOptions options;
  detail::ResolvedOverlap overlap;
  Symmetric<float> gathered;       // n_pes x m x n_local
  Symmetric<std::uint64_t> words;  // [ready: T][flags: n_pes * T][consumed: n_pes][readers: 1]
  std::unique_ptr<Stream> comm;    // producer_consumer
  std::uint64_t epoch = 0;
};

GemmAs::GemmAs(Runtime& rt, std::size_t m, std::size_t n_local, std::size_t k, GemmDtype dtype,
               const GemmAsOptions& requested)
    : state_(std::make_unique<State>()) {
  GemmAsOptions options = requested;  // its tile resolved below
  State& s = *state_;
  const int pe = rt.pe(), n_pes = rt.n_pes();
  if (m == 0 || n_local == 0 || k == 0) {
    bad(pe, "shape must be non-zero, got m=" + std::to_string(m) +
                " n_local=" + std::to_string(n_local) + " k=" + std::to_string(k));
  }
  if (options.comm_blocks < 1 || options.compute_blocks < 1) {
    bad(pe, "comm_blocks and compute_blocks must be at least 1, got " +
                std::to_string(options.comm_blocks) + " and " +
                std::to_string(options.compute_blocks));
  }
  detail::resolve_gemm_tile(rt, "gemm_as", options.tile_m, options.tile_n, m, n_local);
  s.rt = &rt;
  s.m = m;
  s.n_local = n_local;
  s.k = k;
  s.dtype = dtype;
  s.options = options;
  s.overlap =
      detail::resolve_fused(rt, OpKind::gemm_as, options.pattern, options.direction, m, n_local, k);
  const auto p = static_cast<std::size_t>(n_pes);
  s.gathered = rt.alloc<float>(p * m * n_local);
  if (s.overlap.pattern == OverlapPattern::bulk_synchronous) return;
  const std::size_t tiles = ((m + options.tile_m - 1) / options.tile_m) *
                            ((n_local + options.tile_n - 1) / options.tile_n);
  const std::size_t words = tiles * (p + 1) + p + 1;
  s.words = rt.alloc<std::uint64_t>(words);
  detail::zero_heap(rt, s.words.get(), words * sizeof(std::uint64_t));
  if (s.overlap.pattern == OverlapPattern::producer_consumer) s.comm = detail::make_comm_stream(rt);
  rt.barrier();  // every PE's words are zero before any peer signals into them
}

GemmAs::GemmAs(GemmAs&&) noexcept = default;
GemmAs& GemmAs::operator=(GemmAs&&) noexcept = default;
GemmAs::~GemmAs() = default;

OverlapPattern GemmAs::pattern() const { return state_->overlap.pattern; }
CommDirection GemmAs::direction() const { return state_->overlap.direction; }
std::size_t GemmAs::m() const { return state_->m; }
std::size_t GemmAs::n_local() const { return state_->n_local; }
std::size_t GemmAs::k() const { return state_->k; }
GemmDtype GemmAs::dtype() const { return state_->dtype; }

void GemmAs::run(Stream& stream, const float* a, const float* b, float* c) {
  run_typed(stream, a, b, c);
}

void GemmAs::run(Stream& stream, const device::bf16* a, const device::bf16* b, float* c) {
  run_typed(stream, a, b, c);
}

template <class T>
void GemmAs::run_typed(Stream& stream, const T* a, const T* b, float* c) {
  State& s = *state_;
  const int pe = s.rt->pe(), n_pes = s.rt->n_pes();
  detail::check_gemm_run("gemm_as", pe, s.dtype,
                         std::is_same_v<T, float> ? GemmDtype::f32 : GemmDtype::bf16, "a", a, b, c);
  const td::Tile<const T> ta(a, s.m, s.k), tb(b, s.k, s.n_local);
  const td::Tile<float> tc(c, s.m, s.n_local * static_cast<std::size_t>(n_pes));
  const td::Context ctx = s.rt->device_context();
  const GemmAsOptions& o = s.options;
  const std::size_t block = s.m * s.n_local;
  float* mine = s.gathered.get() + static_cast<std::size_t>(pe) * block;
  if (s.overlap.pattern == OverlapPattern::bulk_synchronous) {
    // The GEMM into this PE's slot, the library all-gather in place, the columns into c.
    launch(stream, o.compute_blocks, detail::GemmTilesKernel{},
           td::Tile<float>(mine, s.m, s.n_local), ta, tb, o.tile_m, o.tile_n);
    all_gather(*s.rt, stream, mine, s.gathered.get(), block * sizeof(float));
    launch(stream, n_pes < o.compute_blocks ? n_pes : o.compute_blocks, GatherColumnsKernel{}, tc,
           static_cast<const float*>(s.gathered.get()), n_pes, s.n_local);
    return;
  }
  tdo::GemmAsArgs<T, T> args;
  args.a = ta;
  args.b = tb;
  args.c = tc;
  args.gathered = s.gathered.get();
  args.tile_m = o.tile_m;
  args.tile_n = o.tile_n;
  const std::size_t tiles = args.tiles();
  std::uint64_t* w = s.words.get();
  args.words.ready = w;
  args.flags = w + tiles;
  args.words.consumed = w + tiles * (static_cast<std::size_t>(n_pes) + 1);
  args.words.readers_done = args.words.consumed + n_pes;
  args.words.groups = detail::overlap_groups(s.overlap.pattern, o.comm_blocks, o.compute_blocks);
  args.words.epoch = ++s.epoch;
  args.words.comm_delay_us = o.comm_delay_us;
  args.pull = s.overlap.direction == CommDirection::pull;
  detail::launch_pipelined(stream, s.comm.get(), s.overlap.pattern, ctx, args, o.comm_blocks,
                           o.compute_blocks);
}

}  // namespace tessera::ops
