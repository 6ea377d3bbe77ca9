// Host launcher of the all-reduce: argument checks, the team's epoch counter, the first-call
// agreement check, and the one-block kernel that runs the device building block on the stream.
#include "tessera/ops/all_reduce.hpp"

#include <cstdint>
#include <cstdlib>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <tuple>

#include "runtime/op_support.hpp"
#include "tessera/launch.hpp"

namespace tessera::ops {
namespace {

namespace td = tessera::device;

// Per Runtime (its OpCache): the epochs each team has used, and the call combinations already
// checked for agreement.
class TeamEpochs {
 public:
  // Reserves `segments` epochs on the team of `workspace`; returns the count before them.
  std::uint64_t reserve(const void* workspace, std::uint64_t segments) {
    std::lock_guard lock(mu_);
    std::uint64_t& used = used_[workspace];
    const std::uint64_t first = used;
    used += segments;
    return first;
  }

  // True the first time a combination is seen.
  bool first_call(const void* workspace, std::size_t offset, std::size_t count, Dtype dtype,
                  ReduceOp op) {
    std::lock_guard lock(mu_);
    return seen_.emplace(workspace, offset, count, dtype, op).second;
  }

 private:
  std::mutex mu_;
  std::map<const void*, std::uint64_t> used_;
  std::set<std::tuple<const void*, std::size_t, std::size_t, Dtype, ReduceOp>> seen_;
};

[[noreturn]] void fail(int pe, const std::string& message) {
  throw Error(ErrorCode::invalid_argument, pe, "all_reduce: " + message);
}

bool is_floating(Dtype dtype) {
  return dtype == Dtype::f32 || dtype == Dtype::bf16 || dtype == Dtype::f16;
}

std::string describe(const Team& t) {
  return "team (start " + std::to_string(t.start) + ", stride " + std::to_string(t.stride) +
         ", size " + std::to_string(t.size) + ")";
}

void check_arguments(Runtime& rt, const Team& team, const void* send, const void* recv,
                     std::size_t count, Dtype dtype, ReduceOp op, AllReduceAlgo algo) {
  const int pe = rt.pe();
  if (!team.is_member()) fail(pe, "this PE is not a member of " + describe(team));
  if (team.workspace == nullptr || !rt.in_heap(team.workspace, team.workspace_bytes) ||
      team.workspace_bytes < td::ops::AllReduceWorkspace::bytes_for(team.size)) {
    fail(pe, describe(team) + " has no workspace: make it with team_world, team_node or " +
                 "team_split_strided");
  }
  if (count == 0) fail(pe, "count must be at least 1, got 0");
  if (send == nullptr) fail(pe, "send is null");
  if (recv == nullptr || !rt.in_heap(recv)) {
    fail(pe, "recv must point into the symmetric heap (allocate it with Runtime::malloc/alloc)");
  }
  const std::size_t left = detail::bytes_left_in_block(rt, recv);
  if (left == 0) fail(pe, "recv is not inside a live symmetric heap block (freed?)");
  if (count > left / size_of(dtype)) {
    fail(pe, "recv too small: needs count * " + std::to_string(size_of(dtype)) + " = " +
                 std::to_string(count * size_of(dtype)) + " bytes, the heap block holds " +
                 std::to_string(left) + " bytes from recv");
  }
  if (op == ReduceOp::prod && is_floating(dtype)) {
    fail(pe, std::string("op prod is for integer dtypes (i32, i64), got ") + to_string(dtype));
  }
  if (algo == AllReduceAlgo::atomic) {
    if (op != ReduceOp::sum) {
      fail(pe, std::string("the atomic algorithm only sums, got op ") + to_string(op));
    }
    const bool addable = dtype == Dtype::i32 || dtype == Dtype::i64 ||
                         (dtype == Dtype::f32 && td::platform::kFloatAtomicAdd);
    if (!addable) {
      fail(pe, std::string("the atomic algorithm adds i32, i64") +
                   (td::platform::kFloatAtomicAdd ? " and f32" : "") +
                   " (remote atomic adds of this type), got " + to_string(dtype));
    }
  }
  for (int i = 0; i < team.size; ++i) {
    const Transport t = rt.transport(team.pe(i));
    if (t != Transport::self && t != Transport::mapped) {
      fail(pe, "member PE " + std::to_string(team.pe(i)) + " is reached through " + to_string(t) +
                   ", but all_reduce reads and writes members' heaps directly (load/store): " +
                   "every member must be mapped (same node, TESSERA_P2P=1)");
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

template <class T>
struct Tag {
  using type = T;
};

// Calls f(Tag<T>{}) with the element type of `dtype`.
template <class F>
TESSERA_KERNEL_CODE void with_dtype(Dtype dtype, F&& f) {
  switch (dtype) {
    case Dtype::f32:
      f(Tag<float>{});
      break;
    case Dtype::bf16:
      f(Tag<td::bf16>{});
      break;
    case Dtype::f16:
      f(Tag<td::half>{});
      break;
    case Dtype::i32:
      f(Tag<std::int32_t>{});
      break;
    case Dtype::i64:
      f(Tag<std::int64_t>{});
      break;
  }
}

std::uint64_t segments_of(Dtype dtype, std::size_t count) {
  switch (dtype) {
    case Dtype::f32:
      return td::ops::all_reduce_segments<float>(count);
    case Dtype::bf16:
      return td::ops::all_reduce_segments<td::bf16>(count);
    case Dtype::f16:
      return td::ops::all_reduce_segments<td::half>(count);
    case Dtype::i32:
      return td::ops::all_reduce_segments<std::int32_t>(count);
    case Dtype::i64:
      return td::ops::all_reduce_segments<std::int64_t>(count);
  }
  return 0;
}

struct AllReduceKernel {
  TESSERA_KERNEL_CODE void operator()(td::Block blk, td::Context ctx, td::Team team,
                                      td::ops::AllReduceWorkspace ws, void* recv, const void* send,
                                      std::size_t count, Dtype dtype, ReduceOp op,
                                      AllReduceAlgo algo, std::uint64_t first_epoch) const {
    with_dtype(dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      T* out = static_cast<T*>(recv);
      const T* in = static_cast<const T*>(send);
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
    });
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
  if (team_size <= 1 || bytes < kAllReduceTwoShotThreshold) return AllReduceAlgo::one_shot;
  return bytes < kAllReduceRingThreshold ? AllReduceAlgo::two_shot : AllReduceAlgo::ring;
}

void all_reduce(Runtime& rt, Stream& stream, const Team& team, const void* send, void* recv,
                std::size_t count, Dtype dtype, ReduceOp op, AllReduceAlgo algo) {
  AllReduceAlgo chosen = algo;
  if (chosen == AllReduceAlgo::automatic) chosen = algo_from_env(rt.pe());
  chosen = resolve_all_reduce_algo(count, dtype, team.size, chosen);
  check_arguments(rt, team, send, recv, count, dtype, op, chosen);
  const std::size_t offset = rt.heap_offset(recv);
  TeamEpochs& epochs = detail::op_cache(rt).get<TeamEpochs>();
  if (team.size == rt.n_pes() && epochs.first_call(team.workspace, offset, count, dtype, op)) {
    // Every PE must be making this very call (and not another collective): the message names
    // each PE's call when they differ.
    // (The call's description must fit the check's 63 characters.)
    detail::check_op_call(rt,
                          "ops::all_reduce(" + std::to_string(count) + " x " + to_string(dtype) +
                              ", " + to_string(op) + ", recv @" + std::to_string(offset) + ")",
                          "all_reduce");
  }
  const std::uint64_t first = epochs.reserve(team.workspace, segments_of(dtype, count));
  const auto ws = td::ops::AllReduceWorkspace::from(team.workspace, team.size);
  launch(stream, 1, AllReduceKernel{}, rt.device_context(), team, ws, recv, send, count, dtype, op,
         chosen, first);
}

}  // namespace tessera::ops
