// The overlap taxonomy's names, parsers and the measured `automatic` rule (overlap.hpp).
#include "tessera/ops/overlap.hpp"

#include <algorithm>
#include <memory>
#include <mutex>
#include <string>

#include "ops/overlap_support.hpp"
#include "runtime/op_support.hpp"
#include "tessera/error.hpp"

namespace tessera::ops {

const char* to_string(OverlapPattern pattern) noexcept {
  switch (pattern) {
    case OverlapPattern::automatic:
      return "automatic";
    case OverlapPattern::bulk_synchronous:
      return "bulk_synchronous";
    case OverlapPattern::producer_consumer:
      return "producer_consumer";
    case OverlapPattern::workgroup_specialized:
      return "workgroup_specialized";
    case OverlapPattern::fused_sequential:
      return "fused_sequential";
  }
  return "?";
}

const char* to_string(CommDirection direction) noexcept {
  switch (direction) {
    case CommDirection::automatic:
      return "automatic";
    case CommDirection::push:
      return "push";
    case CommDirection::pull:
      return "pull";
  }
  return "?";
}

const char* to_string(OpKind op) noexcept {
  switch (op) {
    case OpKind::ag_gemm:
      return "ag_gemm";
    case OpKind::gemm_rs:
      return "gemm_rs";
    case OpKind::gemm_ar:
      return "gemm_ar";
    case OpKind::gemm_as:
      return "gemm_as";
    case OpKind::all_reduce_rmsnorm:
      return "all_reduce_rmsnorm";
  }
  return "?";
}

OverlapPattern overlap_pattern_from_string(std::string_view name) {
  if (name == "auto" || name == "automatic") return OverlapPattern::automatic;
  if (name == "bulk_synchronous") return OverlapPattern::bulk_synchronous;
  if (name == "producer_consumer") return OverlapPattern::producer_consumer;
  if (name == "workgroup_specialized") return OverlapPattern::workgroup_specialized;
  if (name == "fused_sequential") return OverlapPattern::fused_sequential;
  throw Error(ErrorCode::invalid_argument, -1,
              "overlap pattern '" + std::string(name) +
                  "' is not one of bulk_synchronous, producer_consumer, workgroup_specialized, "
                  "fused_sequential, auto, automatic");
}

CommDirection comm_direction_from_string(std::string_view name) {
  if (name == "auto" || name == "automatic") return CommDirection::automatic;
  if (name == "push") return CommDirection::push;
  if (name == "pull") return CommDirection::pull;
  throw Error(ErrorCode::invalid_argument, -1,
              "communication direction '" + std::string(name) +
                  "' is not one of push, pull, auto, automatic");
}

bool overlap_applies(OpKind op, OverlapPattern pattern) noexcept {
  if (op != OpKind::all_reduce_rmsnorm) return true;
  return pattern == OverlapPattern::automatic || pattern == OverlapPattern::bulk_synchronous ||
         pattern == OverlapPattern::fused_sequential;
}

OverlapPattern resolve_overlap(OpKind op, std::size_t m, std::size_t n, std::size_t k, int n_pes,
                               bool all_mapped) noexcept {
  if (n_pes <= 1) return OverlapPattern::bulk_synchronous;
  if (!all_mapped) {
    // Not measured with unmapped peers: the kernels each op ran before patterns existed, which
    // push through the proxy (the bulk-synchronous all_reduce needs every member mapped).
    switch (op) {
      case OpKind::ag_gemm:
      case OpKind::gemm_as:
        return OverlapPattern::workgroup_specialized;
      case OpKind::gemm_rs:
      case OpKind::gemm_ar:
      case OpKind::all_reduce_rmsnorm:
        return OverlapPattern::fused_sequential;
    }
  }
  if (op == OpKind::all_reduce_rmsnorm) {
    return m * n * k <= kRmsnormFusionMaxBytes ? OverlapPattern::fused_sequential
                                               : OverlapPattern::bulk_synchronous;
  }
  const double macs = static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  if (macs * n_pes < kFusionThresholdMacs) return OverlapPattern::bulk_synchronous;
  return resolve_fused_overlap(op, m, n, k, n_pes);
}

OverlapPattern resolve_fused_overlap(OpKind op, std::size_t /*m*/, std::size_t /*n*/, std::size_t k,
                                     int /*n_pes*/) noexcept {
  switch (op) {
    case OpKind::ag_gemm:
    case OpKind::gemm_as:
      return OverlapPattern::workgroup_specialized;
    case OpKind::gemm_rs:
      return OverlapPattern::producer_consumer;
    case OpKind::gemm_ar:
      return k < kGemmArProducerConsumerMaxK ? OverlapPattern::producer_consumer
                                             : OverlapPattern::fused_sequential;
    case OpKind::all_reduce_rmsnorm:
      return OverlapPattern::fused_sequential;
  }
  return OverlapPattern::fused_sequential;
}

CommDirection resolve_direction(OverlapPattern pattern, CommDirection direction,
                                bool all_mapped) noexcept {
  if (pattern == OverlapPattern::bulk_synchronous) return CommDirection::automatic;
  if (direction != CommDirection::automatic) return direction;
  return all_mapped ? CommDirection::pull : CommDirection::push;
}

}  // namespace tessera::ops

namespace tessera::detail {

bool all_peers_mapped(const device::Context& ctx) {
  for (int pe = 0; pe < ctx.n_pes; ++pe) {
    if (!ctx.is_mapped(pe)) return false;
  }
  return true;
}

ResolvedOverlap resolve_fused(Runtime& rt, ops::OpKind op, ops::OverlapPattern pattern,
                              ops::CommDirection direction, std::size_t m, std::size_t n,
                              std::size_t k) {
  const int pe = rt.pe();
  const bool mapped = all_peers_mapped(rt.device_context());
  const std::string name = ops::to_string(op);
  if (!ops::overlap_applies(op, pattern)) {
    throw Error(ErrorCode::invalid_argument, pe,
                name + ": pattern " + ops::to_string(pattern) +
                    " does not apply (it runs bulk_synchronous or fused_sequential)");
  }
  ResolvedOverlap r;
  r.pattern = pattern;
  if (pattern == ops::OverlapPattern::automatic) {
    // A direction the caller fixed asks for a fused pattern: bulk_synchronous has none.
    r.pattern = direction == ops::CommDirection::automatic || !mapped
                    ? ops::resolve_overlap(op, m, n, k, rt.n_pes(), mapped)
                    : ops::resolve_fused_overlap(op, m, n, k, rt.n_pes());
  }
  if (pattern == ops::OverlapPattern::bulk_synchronous &&
      direction != ops::CommDirection::automatic) {
    throw Error(ErrorCode::invalid_argument, pe,
                name + ": direction " + ops::to_string(direction) +
                    " does not apply to bulk_synchronous (its collective picks the algorithm); "
                    "pass ops::CommDirection::automatic");
  }
  r.direction = ops::resolve_direction(r.pattern, direction, mapped);
  if (r.direction == ops::CommDirection::pull && !mapped) {
    throw Error(ErrorCode::transport, pe,
                name + ": the pull direction needs every peer's heap mapped on PE " +
                    std::to_string(pe) + "; use push (or automatic) across nodes");
  }
  return r;
}

ops::GemmTileShape default_gemm_tile(Backend backend, std::size_t rows, std::size_t cols) {
  const ops::GemmTileShape base = backend == Backend::host ? ops::kHostGemmTile : ops::kGpuGemmTile;
  return {std::min(base.m, std::max<std::size_t>(rows, 1)),
          std::min(base.n, std::max<std::size_t>(cols, 1))};
}

void resolve_gemm_tile(Runtime& rt, const char* op, std::size_t& tile_m, std::size_t& tile_n,
                       std::size_t rows, std::size_t cols) {
  if (tile_m == 0 && tile_n == 0) {
    const ops::GemmTileShape tile = default_gemm_tile(rt.backend(), rows, cols);
    tile_m = tile.m;
    tile_n = tile.n;
    return;
  }
  if (tile_m == 0 || tile_n == 0) {
    throw Error(ErrorCode::invalid_argument, rt.pe(),
                std::string(op) +
                    ": tile_m and tile_n must both be 0 (the backend's default tile) or both at "
                    "least 1, got " +
                    std::to_string(tile_m) + " and " + std::to_string(tile_n));
  }
}

namespace {
struct FusedTeam {
  std::mutex mu;
  std::unique_ptr<Team> team;
};
}  // namespace

const Team& fused_world_team(Runtime& rt) {
  FusedTeam& state = op_cache(rt).get<FusedTeam>();
  std::lock_guard lock(state.mu);
  if (!state.team) state.team = std::make_unique<Team>(team_world(rt));
  return *state.team;
}

std::unique_ptr<Stream> make_comm_stream(Runtime& rt) { return std::make_unique<Stream>(rt.pe()); }

void check_gemm_run(const char* op, int pe, ops::GemmDtype constructed, ops::GemmDtype given,
                    const char* a_name, const void* a, const void* b, const void* c) {
  const std::string name(op);
  if (given != constructed) {
    throw Error(ErrorCode::invalid_argument, pe,
                name + ": dtype mismatch: constructed for " + ops::to_string(constructed) +
                    " inputs, called with " + ops::to_string(given));
  }
  const char* null = a == nullptr ? a_name : b == nullptr ? "b" : c == nullptr ? "c" : nullptr;
  if (null != nullptr) {
    throw Error(ErrorCode::invalid_argument, pe,
                name + ": null " + null + " on PE " + std::to_string(pe));
  }
}

}  // namespace tessera::detail
