// Host launcher of gemm_ar: pattern and direction, workspace, argument checks, epochs, and the
// kernels of each pattern (device blocks in <tessera/device/ops/gemm_ar.hpp>).
#include "tessera/ops/gemm_ar.hpp"

#include <string>
#include <type_traits>

#include "ops/heap_fill.hpp"
#include "ops/overlap_support.hpp"
#include "tessera/device/context.hpp"
#include "tessera/device/ops/gemm_ar.hpp"
#include "tessera/error.hpp"
#include "tessera/heap.hpp"
#include "tessera/launch.hpp"
#include "tessera/ops/all_reduce.hpp"

namespace tessera::ops {
namespace {

namespace td = tessera::device;
namespace tdo = tessera::device::ops;

[[noreturn]] void bad(int pe, const std::string& message) {
  throw Error(ErrorCode::invalid_argument, pe, "gemm_ar: " + message);
}

}  // namespace

struct GemmAr::State {
  Runtime* rt;
  std::size_t m, n, k_local;
  GemmDtype dtype;
  GemmArOptions options;
  detail::ResolvedOverlap overlap;
  std::size_t shard_rows = 0, per_shard = 0;
  Symmetric<float> partial, slots, reduced;
  Symmetric<std::uint64_t> words;  // [ready: T][part: T][sum: T][consumed: n_pes][readers: 1]
  const Team* team = nullptr;      // bulk_synchronous
  std::unique_ptr<Stream> comm;    // producer_consumer
  std::uint64_t epoch = 0;
};

GemmAr::GemmAr(Runtime& rt, std::size_t m, std::size_t n, std::size_t k_local, GemmDtype dtype,
               const GemmArOptions& requested)
    : state_(std::make_unique<State>()) {
  GemmArOptions options = requested;  // its tile resolved below
  State& s = *state_;
  const int pe = rt.pe(), n_pes = rt.n_pes();
  if (m == 0 || n == 0 || k_local == 0) {
    bad(pe, "shape must be non-zero, got m=" + std::to_string(m) + " n=" + std::to_string(n) +
                " k_local=" + std::to_string(k_local));
  }
  if (options.comm_blocks < 1 || options.compute_blocks < 1) {
    bad(pe, "comm_blocks and compute_blocks must be at least 1, got " +
                std::to_string(options.comm_blocks) + " and " +
                std::to_string(options.compute_blocks));
  }
  detail::resolve_gemm_tile(rt, "gemm_ar", options.tile_m, options.tile_n, m, n);
  s.rt = &rt;
  s.m = m;
  s.n = n;
  s.k_local = k_local;
  s.dtype = dtype;
  s.options = options;
  s.overlap =
      detail::resolve_fused(rt, OpKind::gemm_ar, options.pattern, options.direction, m, n, k_local);
  s.partial = rt.alloc<float>(m * n);
  if (s.overlap.pattern == OverlapPattern::bulk_synchronous) {
    s.team = &detail::fused_world_team(rt);
    return;
  }
  const auto p = static_cast<std::size_t>(n_pes);
  s.shard_rows = (m + p - 1) / p;
  s.per_shard = ((s.shard_rows + options.tile_m - 1) / options.tile_m) *
                ((n + options.tile_n - 1) / options.tile_n);
  const std::size_t tiles = p * s.per_shard;
  if (s.overlap.direction == CommDirection::push) {
    s.slots = rt.alloc<float>(tiles * options.tile_m * options.tile_n);
  }
  s.reduced = rt.alloc<float>(m * n);
  const std::size_t words = 3 * tiles + p + 1;
  s.words = rt.alloc<std::uint64_t>(words);
  detail::zero_heap(rt, s.words.get(), words * sizeof(std::uint64_t));
  if (s.overlap.pattern == OverlapPattern::producer_consumer) s.comm = detail::make_comm_stream(rt);
  rt.barrier();  // every PE's words are zero before any peer signals into them
}

GemmAr::GemmAr(GemmAr&&) noexcept = default;
GemmAr& GemmAr::operator=(GemmAr&&) noexcept = default;
GemmAr::~GemmAr() = default;

OverlapPattern GemmAr::pattern() const { return state_->overlap.pattern; }
CommDirection GemmAr::direction() const { return state_->overlap.direction; }
std::size_t GemmAr::m() const { return state_->m; }
std::size_t GemmAr::n() const { return state_->n; }
std::size_t GemmAr::k_local() const { return state_->k_local; }
GemmDtype GemmAr::dtype() const { return state_->dtype; }

void GemmAr::run(Stream& stream, const float* a, const float* b, float* c) {
  run_typed(stream, a, b, c);
}

void GemmAr::run(Stream& stream, const device::bf16* a, const device::bf16* b, float* c) {
  run_typed(stream, a, b, c);
}

template <class T>
void GemmAr::run_typed(Stream& stream, const T* a, const T* b, float* c) {
  State& s = *state_;
  const int pe = s.rt->pe();
  detail::check_gemm_run("gemm_ar", pe, s.dtype,
                         std::is_same_v<T, float> ? GemmDtype::f32 : GemmDtype::bf16, "a", a, b, c);
  const td::Tile<const T> ta(a, s.m, s.k_local), tb(b, s.k_local, s.n);
  const td::Context ctx = s.rt->device_context();
  const GemmArOptions& o = s.options;
  if (s.overlap.pattern == OverlapPattern::bulk_synchronous) {
    // The GEMM into this PE's workspace, the library all-reduce in place, a copy into c.
    launch(stream, o.compute_blocks, detail::GemmTilesKernel{},
           td::Tile<float>(s.partial.get(), s.m, s.n), ta, tb, o.tile_m, o.tile_n);
    all_reduce(*s.rt, stream, *s.team, s.partial.get(), s.partial.get(), s.m * s.n, Dtype::f32,
               ReduceOp::sum);
    detail::copy_on_stream(stream, c, s.partial.get(), s.m * s.n * sizeof(float));
    return;
  }
  const std::size_t tiles = static_cast<std::size_t>(s.rt->n_pes()) * s.per_shard;
  tdo::GemmArArgs<T, T> args;
  args.a = ta;
  args.b = tb;
  args.c = td::Tile<float>(c, s.m, s.n);
  args.partial = s.partial.get();
  args.slots = s.slots.get();
  args.reduced = s.reduced.get();
  std::uint64_t* w = s.words.get();
  args.words.ready = w;
  args.part_flags = w + tiles;
  args.sum_flags = w + 2 * tiles;
  args.words.consumed = w + 3 * tiles;
  args.words.readers_done = args.words.consumed + s.rt->n_pes();
  args.words.groups = detail::overlap_groups(s.overlap.pattern, o.comm_blocks, o.compute_blocks);
  args.words.epoch = ++s.epoch;
  args.words.comm_delay_us = o.comm_delay_us;
  args.shard_rows = s.shard_rows;
  args.tile_m = o.tile_m;
  args.tile_n = o.tile_n;
  args.pull = s.overlap.direction == CommDirection::pull;
  args.all_rows = true;
  detail::launch_pipelined(stream, s.comm.get(), s.overlap.pattern, ctx, args, o.comm_blocks,
                           o.compute_blocks);
}

}  // namespace tessera::ops
