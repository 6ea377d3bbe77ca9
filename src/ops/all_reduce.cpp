// Host launcher of the all-reduce: argument checks, then the one-block kernel that runs the
// device building block on the stream (after the first-call agreement check where the team needs
// it: ops/collective_support.hpp).
#include "tessera/ops/all_reduce.hpp"

#include <cstdint>
#include <cstdlib>
#include <string>

#include "ops/collective_support.hpp"

namespace tessera::ops {
namespace {

namespace td = tessera::device;

using support::fail;

void check_arguments(Runtime& rt, const Team& team, const void* send, const void* recv,
                     std::size_t count, Dtype dtype, ReduceOp op, AllReduceAlgo algo) {
  const int pe = rt.pe();
  const char* what = "all_reduce";
  support::check_team(rt, team, what);
  if (count == 0) fail(pe, what, "count must be at least 1, got 0");
  if (send == nullptr) fail(pe, what, "send is null");
  support::check_heap_buffer(rt, recv, count, "count", dtype, what, "recv");
  support::check_reduce_op(pe, dtype, op, what);
  if (algo == AllReduceAlgo::atomic) {
    if (op != ReduceOp::sum) {
      fail(pe, what, std::string("the atomic algorithm only sums, got op ") + to_string(op));
    }
    const bool addable = dtype == Dtype::i32 || dtype == Dtype::i64 ||
                         (dtype == Dtype::f32 && td::platform::kFloatAtomicAdd);
    if (!addable) {
      fail(pe, what,
           std::string("the atomic algorithm adds i32, i64") +
               (td::platform::kFloatAtomicAdd ? " and f32" : "") +
               " (remote atomic adds of this type), got " + to_string(dtype));
    }
  }
}

AllReduceAlgo algo_from_env(int pe) {
  const char* text = std::getenv("TESSERA_ALLREDUCE_ALGO");
  if (text == nullptr || *text == '\0') return AllReduceAlgo::automatic;
  const std::string value(text);
  if (value == "one_shot") return AllReduceAlgo::one_shot;
  if (value == "two_shot") return AllReduceAlgo::two_shot;
  if (value == "ring") return AllReduceAlgo::ring;
  if (value == "atomic") return AllReduceAlgo::atomic;
  if (value == "auto" || value == "automatic") return AllReduceAlgo::automatic;
  throw Error(ErrorCode::invalid_argument, pe,
              "TESSERA_ALLREDUCE_ALGO must be one_shot, two_shot, ring, atomic or auto, got '" +
                  value + "'");
}

std::uint64_t segments_of(Dtype dtype, std::size_t count) {
  std::uint64_t segments = 0;
  support::with_dtype_on_host(dtype, [&](auto tag) {
    segments = td::ops::all_reduce_segments<typename decltype(tag)::type>(count);
  });
  return segments;
}

// One kernel per element type (launched by support::launch_per_dtype): each stays small enough
// for the device compiler, where one kernel switching over every type was several times slower
// to build.
template <class T>
struct AllReduceKernel {
  TESSERA_KERNEL_CODE void operator()(td::Block blk, td::Context ctx, td::Team team,
                                      td::ops::AllReduceWorkspace ws, T* out, const T* in,
                                      std::size_t count, ReduceOp op, AllReduceAlgo algo,
                                      support::CallEpochs epochs, support::CallDescriptor call,
                                      support::Agreement check) const {
    const std::uint64_t first_epoch = epochs.first(blk);
    if (!support::call_agreed(blk, ctx, team, call, check, first_epoch, "all_reduce")) return;
    switch (algo) {
      case AllReduceAlgo::automatic:
      case AllReduceAlgo::one_shot:
        td::ops::all_reduce_one_shot(blk, ctx, team, ws, out, in, count, op, first_epoch);
        break;
      case AllReduceAlgo::two_shot:
        td::ops::all_reduce_two_shot(blk, ctx, team, ws, out, in, count, op, first_epoch);
        break;
      case AllReduceAlgo::ring:
        td::ops::all_reduce_ring(blk, ctx, team, ws, out, in, count, op, first_epoch);
        break;
      case AllReduceAlgo::atomic:
        if constexpr (std::is_same_v<T, float> || std::is_same_v<T, std::int32_t> ||
                      std::is_same_v<T, std::int64_t>) {
          td::ops::all_reduce_atomic(blk, ctx, team, ws, out, in, count, first_epoch);
        }
        break;
    }
  }
};

}  // namespace

const char* to_string(Dtype dtype) noexcept {
  switch (dtype) {
    case Dtype::f32:
      return "f32";
    case Dtype::bf16:
      return "bf16";
    case Dtype::f16:
      return "f16";
    case Dtype::i32:
      return "i32";
    case Dtype::i64:
      return "i64";
  }
  return "?";
}

const char* to_string(ReduceOp op) noexcept {
  switch (op) {
    case ReduceOp::sum:
      return "sum";
    case ReduceOp::max:
      return "max";
    case ReduceOp::min:
      return "min";
    case ReduceOp::prod:
      return "prod";
  }
  return "?";
}

const char* to_string(AllReduceAlgo algo) noexcept {
  switch (algo) {
    case AllReduceAlgo::automatic:
      return "automatic";
    case AllReduceAlgo::one_shot:
      return "one_shot";
    case AllReduceAlgo::two_shot:
      return "two_shot";
    case AllReduceAlgo::ring:
      return "ring";
    case AllReduceAlgo::atomic:
      return "atomic";
  }
  return "?";
}

std::size_t size_of(Dtype dtype) noexcept {
  switch (dtype) {
    case Dtype::f32:
    case Dtype::i32:
      return 4;
    case Dtype::bf16:
    case Dtype::f16:
      return 2;
    case Dtype::i64:
      return 8;
  }
  return 0;
}

AllReduceAlgo resolve_all_reduce_algo(std::size_t count, Dtype dtype, int team_size,
                                      AllReduceAlgo algo) {
  if (algo != AllReduceAlgo::automatic) return algo;
  algo = algo_from_env(-1);
  if (algo != AllReduceAlgo::automatic) return algo;
  const std::size_t bytes = count * size_of(dtype);
  const std::size_t two_shot_from =
      team_size == 2 ? kAllReduceTwoShotThresholdOfTwo : kAllReduceTwoShotThreshold;
  if (team_size <= 1 || bytes < two_shot_from) return AllReduceAlgo::one_shot;
  return bytes < kAllReduceRingThreshold ? AllReduceAlgo::two_shot : AllReduceAlgo::ring;
}

void all_reduce(Runtime& rt, Stream& stream, const Team& team, const void* send, void* recv,
                std::size_t count, Dtype dtype, ReduceOp op, AllReduceAlgo algo) {
  AllReduceAlgo chosen = algo;
  if (chosen == AllReduceAlgo::automatic) chosen = algo_from_env(rt.pe());
  chosen = resolve_all_reduce_algo(count, dtype, team.size, chosen);
  check_arguments(rt, team, send, recv, count, dtype, op, chosen);
  const support::CallDescriptor call =
      support::make_call(support::CollectiveKind::all_reduce, count, dtype, op,
                         static_cast<std::uint64_t>(chosen), rt.heap_offset(recv));
  support::launch_team_collective<AllReduceKernel>(rt, stream, team, call, "all_reduce",
                                                   segments_of(dtype, count), dtype, recv, send,
                                                   count, op, chosen);
}

}  // namespace tessera::ops
