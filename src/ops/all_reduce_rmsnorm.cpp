// Host launcher of all_reduce_rmsnorm: argument checks, the per-shape workspace, and the kernels
// of its two patterns (device blocks in <tessera/device/ops/rmsnorm.hpp>).
#include "tessera/ops/all_reduce_rmsnorm.hpp"

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <tuple>

#include "ops/heap_fill.hpp"
#include "ops/overlap_support.hpp"
#include "runtime/op_support.hpp"
#include "tessera/device/context.hpp"
#include "tessera/device/ops/rmsnorm.hpp"
#include "tessera/error.hpp"
#include "tessera/launch.hpp"

namespace tessera::ops {
namespace {

namespace td = tessera::device;
namespace tdo = tessera::device::ops;

[[noreturn]] void bad(int pe, const std::string& message) {
  throw Error(ErrorCode::invalid_argument, pe, "all_reduce_rmsnorm: " + message);
}

// Blocks per call: a few row ranges, never more than there are rows.
constexpr std::size_t kMaxBlocks = 4;

// The workspace of one (team, shape, dtype, pattern): staging (fused) or the all-reduced sum
// (bulk_synchronous), rows x hidden elements, and the fused pattern's words.
struct Workspace {
  void* stage = nullptr;
  // [flags: team size * blocks][consumed: n_pes][readers: 1][calls: DeviceEpoch::kWords]: the
  // kernel takes each call's epoch from the device count, so a captured call replays correctly.
  std::uint64_t* words = nullptr;
};

struct Workspaces {
  std::mutex mu;
  std::map<std::tuple<int, int, int, std::size_t, std::size_t, int, int>, Workspace> by_key;
};

struct NormKernel {
  template <class T>
  TESSERA_KERNEL_CODE void operator()(td::Block blk, T* y, const T* sum, const T* residual,
                                      const T* weight, std::size_t rows, std::size_t hidden,
                                      float eps) const {
    const auto b = static_cast<std::size_t>(blk.block_id());
    const auto grid = static_cast<std::size_t>(blk.grid_size());
    tdo::rmsnorm_rows(blk, y, sum, residual, weight, hidden, eps, rows * b / grid,
                      rows * (b + 1) / grid);
  }
};

struct FusedKernel {
  template <class T>
  TESSERA_KERNEL_CODE void operator()(td::Block blk, td::Context ctx,
                                      tdo::AllReduceRmsnormArgs<T> args) const {
    tdo::all_reduce_rmsnorm(blk, ctx, args);
  }
};

template <class T>
void run_typed(Runtime& rt, Stream& stream, const Team& team, const void* x, const void* residual,
               const void* weight, void* y, std::size_t rows, std::size_t hidden, Dtype dtype,
               float eps, OverlapPattern pattern) {
  const int blocks = static_cast<int>(rows < kMaxBlocks ? rows : kMaxBlocks);
  const std::size_t count = rows * hidden;
  Workspaces& all = detail::op_cache(rt).get<Workspaces>();
  Workspace* ws;
  {
    std::lock_guard lock(all.mu);
    const auto key = std::make_tuple(team.start, team.stride, team.size, rows, hidden,
                                     static_cast<int>(dtype), static_cast<int>(pattern));
    auto it = all.by_key.find(key);
    if (it == all.by_key.end()) {
      // First call on this shape: collective over the job (the team spans it).
      detail::refuse_capture(stream, "all_reduce_rmsnorm",
                             "is the first on its shape (rows " + std::to_string(rows) +
                                 ", hidden " + std::to_string(hidden) + ", " + to_string(dtype) +
                                 ", " + to_string(pattern) +
                                 "): it allocates the shape's workspace collectively");
      Workspace fresh;
      fresh.stage = rt.malloc(count * sizeof(T));
      if (pattern == OverlapPattern::fused_sequential) {
        const std::size_t words =
            static_cast<std::size_t>(team.size) * static_cast<std::size_t>(blocks) +
            static_cast<std::size_t>(rt.n_pes()) + 1 + td::DeviceEpoch::kWords;
        fresh.words = static_cast<std::uint64_t*>(rt.malloc(words * sizeof(std::uint64_t)));
        detail::zero_heap(rt, fresh.words, words * sizeof(std::uint64_t));
        rt.barrier();  // every PE's words are zero before any peer signals into them
      }
      it = all.by_key.emplace(key, fresh).first;
    }
    ws = &it->second;
  }
  auto* stage = static_cast<T*>(ws->stage);
  if (pattern == OverlapPattern::bulk_synchronous) {
    all_reduce(rt, stream, team, x, stage, count, dtype, ReduceOp::sum);
    launch(stream, blocks, NormKernel{}, static_cast<T*>(y), static_cast<const T*>(stage),
           static_cast<const T*>(residual), static_cast<const T*>(weight), rows, hidden, eps);
    return;
  }
  tdo::AllReduceRmsnormArgs<T> args;
  args.x = static_cast<const T*>(x);
  args.residual = static_cast<const T*>(residual);
  args.weight = static_cast<const T*>(weight);
  args.y = static_cast<T*>(y);
  args.stage = stage;
  args.flags = ws->words;
  args.consumed =
      ws->words + static_cast<std::size_t>(team.size) * static_cast<std::size_t>(blocks);
  args.readers_done = args.consumed + rt.n_pes();
  args.team = team;
  args.rows = rows;
  args.hidden = hidden;
  args.eps = eps;
  args.blocks = blocks;
  args.calls = td::DeviceEpoch{args.readers_done + 1};
  launch(stream, blocks, FusedKernel{}, rt.device_context(), args);
}

}  // namespace

void all_reduce_rmsnorm(Runtime& rt, Stream& stream, const Team& team, const void* x,
                        const void* residual, const void* weight, void* y, std::size_t rows,
                        std::size_t hidden, Dtype dtype, float eps, OverlapPattern pattern) {
  const int pe = rt.pe();
  if (dtype != Dtype::f32 && dtype != Dtype::bf16 && dtype != Dtype::f16) {
    bad(pe, std::string("dtype ") + to_string(dtype) + " is not a floating type (f32, bf16, f16)");
  }
  if (rows == 0 || hidden == 0) {
    bad(pe, "shape must be non-zero, got rows=" + std::to_string(rows) +
                " hidden=" + std::to_string(hidden));
  }
  if (x == nullptr || residual == nullptr || weight == nullptr || y == nullptr) {
    bad(pe, std::string("null ") +
                (x == nullptr          ? "x"
                 : residual == nullptr ? "residual"
                 : weight == nullptr   ? "weight"
                                       : "y") +
                " on PE " + std::to_string(pe));
  }
  if (!(eps > 0.0f)) bad(pe, "eps must be positive, got " + std::to_string(eps));
  if (!overlap_applies(OpKind::all_reduce_rmsnorm, pattern)) {
    bad(pe, std::string("pattern ") + to_string(pattern) +
                " does not apply (it runs bulk_synchronous or fused_sequential)");
  }
  if (!team.is_member()) bad(pe, "this PE is not a member of the team");
  if (team.size != rt.n_pes()) {
    bad(pe, "teams smaller than the job (" + std::to_string(team.size) + " of " +
                std::to_string(rt.n_pes()) +
                " PEs) are not supported yet: the workspace is allocated collectively at the "
                "first call");
  }
  const td::Context ctx = rt.device_context();
  for (int r = 0; r < team.size; ++r) {
    if (!ctx.is_mapped(team.pe(r))) {
      bad(pe, "member PE " + std::to_string(team.pe(r)) +
                  "'s heap is not load/store reachable from PE " + std::to_string(pe));
    }
  }
  const std::size_t elem = size_of(dtype);
  if (pattern == OverlapPattern::automatic) {
    pattern = resolve_overlap(OpKind::all_reduce_rmsnorm, rows, hidden, elem, team.size,
                              detail::all_peers_mapped(ctx));
  }
  switch (dtype) {
    case Dtype::f32:
      run_typed<float>(rt, stream, team, x, residual, weight, y, rows, hidden, dtype, eps, pattern);
      return;
    case Dtype::bf16:
      run_typed<td::bf16>(rt, stream, team, x, residual, weight, y, rows, hidden, dtype, eps,
                          pattern);
      return;
    default:
      run_typed<td::half>(rt, stream, team, x, residual, weight, y, rows, hidden, dtype, eps,
                          pattern);
      return;
  }
}

}  // namespace tessera::ops
