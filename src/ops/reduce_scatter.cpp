// Host launcher of the reduce-scatter: argument checks, then the one-block kernel that runs the
// device building block on the stream (after the first-call agreement check where the team needs
// it: ops/collective_support.hpp).
#include "tessera/ops/reduce_scatter.hpp"

#include <cstdint>
#include <cstdlib>
#include <string>

#include "ops/collective_support.hpp"

namespace tessera::ops {
namespace {

namespace td = tessera::device;
using support::fail;

constexpr const char* kWhat = "reduce_scatter";

ReduceScatterAlgo algo_from_env(int pe) {
  const char* text = std::getenv("TESSERA_REDUCESCATTER_ALGO");
  if (text == nullptr || *text == '\0') return ReduceScatterAlgo::automatic;
  const std::string value(text);
  if (value == "one_shot") return ReduceScatterAlgo::one_shot;
  if (value == "ring") return ReduceScatterAlgo::ring;
  if (value == "auto" || value == "automatic") return ReduceScatterAlgo::automatic;
  throw Error(ErrorCode::invalid_argument, pe,
              "TESSERA_REDUCESCATTER_ALGO must be one_shot, ring or auto, got '" + value + "'");
}

std::uint64_t segments_of(Dtype dtype, std::size_t count, int team_size) {
  std::uint64_t segments = 0;
  support::with_dtype_on_host(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    segments = td::ops::reduce_scatter_segments<T>(count, team_size);
  });
  return segments;
}

// One kernel per element type, chosen on the host by support::launch_per_dtype.
template <class T>
struct ReduceScatterKernel {
  TESSERA_KERNEL_CODE void operator()(td::Block blk, td::Context ctx, td::Team team,
                                      td::ops::AllReduceWorkspace ws, T* out, const T* in,
                                      std::size_t count, ReduceOp op, ReduceScatterAlgo algo,
                                      support::CallEpochs epochs, support::CallDescriptor call,
                                      support::Agreement check) const {
    const std::uint64_t first_epoch = epochs.first(blk);
    if (!support::call_agreed(blk, ctx, team, call, check, first_epoch, kWhat)) return;
    if (algo == ReduceScatterAlgo::ring) {
      td::ops::reduce_scatter_ring(blk, ctx, team, ws, out, in, count, op, first_epoch);
    } else {
      td::ops::reduce_scatter_one_shot(blk, ctx, team, ws, out, in, count, op, first_epoch);
    }
  }
};

}  // namespace

const char* to_string(ReduceScatterAlgo algo) noexcept {
  switch (algo) {
    case ReduceScatterAlgo::automatic:
      return "automatic";
    case ReduceScatterAlgo::one_shot:
      return "one_shot";
    case ReduceScatterAlgo::ring:
      return "ring";
  }
  return "?";
}

ReduceScatterAlgo resolve_reduce_scatter_algo(std::size_t count, Dtype dtype, int team_size,
                                              ReduceScatterAlgo algo) {
  if (algo != ReduceScatterAlgo::automatic) return algo;
  algo = algo_from_env(-1);
  if (algo != ReduceScatterAlgo::automatic) return algo;
  const std::size_t bytes = count * size_of(dtype);
  if (team_size <= 1 || bytes < kReduceScatterRingThreshold) return ReduceScatterAlgo::one_shot;
  return ReduceScatterAlgo::ring;
}

void reduce_scatter(Runtime& rt, Stream& stream, const Team& team, const void* send, void* recv,
                    std::size_t count, Dtype dtype, ReduceOp op, ReduceScatterAlgo algo) {
  const int pe = rt.pe();
  ReduceScatterAlgo chosen = algo;
  if (chosen == ReduceScatterAlgo::automatic) chosen = algo_from_env(pe);
  chosen = resolve_reduce_scatter_algo(count, dtype, team.size, chosen);
  support::check_team(rt, team, kWhat);
  if (count == 0) fail(pe, kWhat, "count must be at least 1, got 0");
  if (send == nullptr) fail(pe, kWhat, "send is null");
  support::check_heap_buffer(rt, recv, count, "count", dtype, kWhat, "recv");
  support::check_reduce_op(pe, dtype, op, kWhat);
  const std::size_t es = size_of(dtype), m = static_cast<std::size_t>(team.size);
  const void* own_block =
      static_cast<const unsigned char*>(send) + static_cast<std::size_t>(team.my_rank) * count * es;
  if (recv != own_block && support::overlap(send, m * count * es, recv, count * es)) {
    fail(pe, kWhat,
         "recv overlaps send: out of place they must be disjoint, in place recv must be send + "
         "my_rank * count (this PE's block)");
  }
  // recv is written by this member only, so its offset may differ between members (in place it
  // does): not part of the agreement.
  const support::CallDescriptor call =
      support::make_call(support::CollectiveKind::reduce_scatter, count, dtype, op,
                         static_cast<std::uint64_t>(chosen), 0);
  support::launch_team_collective<ReduceScatterKernel>(rt, stream, team, call, kWhat,
                                                       segments_of(dtype, count, team.size), dtype,
                                                       recv, send, count, op, chosen);
}

}  // namespace tessera::ops
