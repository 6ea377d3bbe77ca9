// tessera-bench taxonomy: the overlap taxonomy of the fused GEMM + communication ops, side by side.
// For each op and global shape MxNxK (--shapes; default: square 256^3, 1024^3, 2048^3 and one
// communication-heavy shape per op), every overlap pattern x direction (push, pull) x comm_blocks
// in {1, 2, 4} (comm_blocks only where the pattern has communicating blocks: producer_consumer
// and workgroup_specialized), then `automatic`:
//   ag_gemm  C[M, N/P] = allgather(A[M/P, K]) x B[K, N/P]          moves A: M x K
//   gemm_rs  C[M/P, N] = reduce_scatter(A[M, K/P] x B[K/P, N])     moves C: M x N
//   gemm_ar  C[M, N]   = all_reduce(A[M, K/P] x B[K/P, N])         moves C: M x N
//   gemm_as  C[M, N]   = column blocks A[M, K] x B[K, N/P], all-scattered   moves C: M x N
// Per row:
//   time:  PE 0's median of one call to completion (all PEs leave an idle barrier before each);
//   limit: the GEMM alone: the same gemm_tile engine, shape, tiles and compute blocks, no
//          communication, so fraction_of_limit is the fraction of the GEMM alone the op reaches;
//   peer:  MPI-unfused: the MPI collective and the same GEMM one after the other (MPI_Allgather
//          then GEMM; GEMM then MPI_Reduce_scatter_block / MPI_Allreduce / MPI_Allgather of
//          column blocks), so speedup_vs_peer is the speedup over MPI-unfused.
// A pattern that does not apply to an op (its constructor throws invalid_argument) gets no row;
// the op's summary row names it under not_applicable, with the reason (table: a # line).
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "gemm_grid.hpp"
#include "mpi_peer.hpp"
#include "registry.hpp"
#include "tessera/error.hpp"
#include "tessera/ops/ag_gemm.hpp"
#include "tessera/ops/gemm_rs.hpp"

namespace tessera::bench {
namespace {

namespace td = tessera::device;

// Blocks that compute, in the fused ops and in the GEMM alone; the communicating blocks of
// producer_consumer and workgroup_specialized come on top.
constexpr int kComputeBlocks = 2;
constexpr int kCommBlockCounts[] = {1, 2, 4};

// Until include/tessera/ops/overlap.hpp lands on this branch: the taxonomy's names.
enum class OverlapPattern {
  automatic,
  bulk_synchronous,
  producer_consumer,
  workgroup_specialized,
  fused_sequential
};
enum class CommDirection { automatic, push, pull };

const char* to_string(OverlapPattern p) {
  switch (p) {
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

const char* to_string(CommDirection d) {
  switch (d) {
    case CommDirection::automatic:
      return "automatic";
    case CommDirection::push:
      return "push";
    case CommDirection::pull:
      return "pull";
  }
  return "?";
}

// One point of the taxonomy: how the fused op is asked to overlap.
struct Choice {
  OverlapPattern pattern = OverlapPattern::automatic;
  CommDirection direction = CommDirection::automatic;
  int comm_blocks = 1;
};

std::string choice_name(const Choice& c) {
  if (c.pattern == OverlapPattern::automatic) return "automatic";
  std::string name = std::string(to_string(c.pattern)) + "/" + to_string(c.direction);
  if (c.pattern == OverlapPattern::producer_consumer ||
      c.pattern == OverlapPattern::workgroup_specialized) {
    name += "/cb" + std::to_string(c.comm_blocks);
  }
  return name;
}

// Every explicit choice, then automatic.
std::vector<Choice> all_choices() {
  std::vector<Choice> choices;
  for (const OverlapPattern p :
       {OverlapPattern::bulk_synchronous, OverlapPattern::producer_consumer,
        OverlapPattern::workgroup_specialized, OverlapPattern::fused_sequential}) {
    for (const CommDirection d : {CommDirection::push, CommDirection::pull}) {
      if (p == OverlapPattern::producer_consumer || p == OverlapPattern::workgroup_specialized) {
        for (const int cb : kCommBlockCounts) choices.push_back({p, d, cb});
      } else {
        choices.push_back({p, d, 1});
      }
    }
  }
  choices.push_back({});
  return choices;
}

// A fused op constructed for one Choice: one call to completion, and what it resolved to.
struct Fused {
  std::function<void()> run;
  std::string pattern, direction;
};

// Thrown (on every PE alike) when a choice does not apply to an op.
[[noreturn]] void not_applicable(const std::string& why) {
  throw Error(ErrorCode::invalid_argument, -1, why);
}

std::vector<float> filled(std::size_t count, int seed) {
  std::vector<float> v(count);
  for (std::size_t i = 0; i < count; ++i) {
    v[i] = static_cast<float>((i * 7 + static_cast<std::size_t>(seed) * 3) % 23) / 23.0f - 0.5f;
  }
  return v;
}

// Symmetric buffer of `count` floats holding filled(count, seed).
Symmetric<float> heap_filled(Runtime& rt, std::size_t count, int seed) {
  auto buffer = rt.alloc<float>(count);
  const std::vector<float> values = filled(count, seed);
  std::copy(values.begin(), values.end(), buffer.get());
  return buffer;
}

// One op on one shape: its operands (inputs and output in the heap, so every pattern and
// direction may use them in place), the GEMM alone, the MPI-unfused baseline and the fused op.
class Workload {
 public:
  virtual ~Workload() = default;
  // Bytes of the communicated matrix one PE contributes.
  virtual std::size_t bytes() const = 0;
  // The GEMM alone, run to completion.
  virtual void gemm_alone() = 0;
  // MPI-unfused, sampled on PE 0 (collective).
  virtual peer::PeerTimes mpi_unfused(int warmup, int iters) = 0;
  // Constructs the op for `choice` (collective); throws Error(invalid_argument) where the choice
  // does not apply.
  virtual Fused make(const Choice& choice) = 0;
};

class AgGemmWorkload final : public Workload {
 public:
  AgGemmWorkload(BenchEnv& env, const GemmShape& s)
      : env_(env),
        s_(s),
        m_local_(s.m / static_cast<std::size_t>(env.rt.n_pes())),
        n_local_(s.n / static_cast<std::size_t>(env.rt.n_pes())),
        a_shard_(heap_filled(env.rt, m_local_ * s.k, env.rt.pe())),
        b_(heap_filled(env.rt, s.k * n_local_, env.rt.pe() + 17)),
        c_(env.rt.alloc<float>(s.m * n_local_)),
        a_full_(s.m * s.k, 0.0f) {}

  std::size_t bytes() const override { return m_local_ * s_.k * sizeof(float); }

  void gemm_alone() override {
    gemm_grid<float>(env_.stream, kComputeBlocks, td::Tile<float>(c_.get(), s_.m, n_local_),
                     td::Tile<const float>(a_full_.data(), s_.m, s_.k),
                     td::Tile<const float>(b_.get(), s_.k, n_local_));
  }

  peer::PeerTimes mpi_unfused(int warmup, int iters) override {
    return peer::allgather_then_gemm(
        env_.rt.pe(), env_.rt.n_pes(), a_shard_.get(), a_full_.data(), bytes(),
        [&] { gemm_alone(); }, warmup, iters);
  }

  Fused make(const Choice& choice) override {
    if (choice.pattern != OverlapPattern::automatic &&
        choice.pattern != OverlapPattern::workgroup_specialized) {
      not_applicable("ag_gemm: pattern " + std::string(to_string(choice.pattern)) +
                     " is not implemented on this branch yet");
    }
    ops::AgGemmOptions options;
    options.variant = choice.direction == CommDirection::push   ? ops::AgGemmVariant::push
                      : choice.direction == CommDirection::pull ? ops::AgGemmVariant::pull
                                                                : ops::AgGemmVariant::automatic;
    options.comm_blocks = choice.comm_blocks;
    options.compute_blocks = kComputeBlocks;
    auto op =
        std::make_shared<ops::AgGemm>(env_.rt, s_.m, n_local_, s_.k, ops::GemmDtype::f32, options);
    return {[this, op] {
              op->run(env_.stream, a_shard_.get(), b_.get(), c_.get());
              env_.stream.synchronize();
            },
            "workgroup_specialized", ops::to_string(op->variant())};
  }

 private:
  BenchEnv& env_;
  GemmShape s_;
  std::size_t m_local_, n_local_;
  Symmetric<float> a_shard_, b_, c_;
  std::vector<float> a_full_;  // MPI_Allgather's receive buffer; the GEMM alone's A
};

class GemmRsWorkload final : public Workload {
 public:
  GemmRsWorkload(BenchEnv& env, const GemmShape& s)
      : env_(env),
        s_(s),
        m_local_(s.m / static_cast<std::size_t>(env.rt.n_pes())),
        k_local_(s.k / static_cast<std::size_t>(env.rt.n_pes())),
        a_(heap_filled(env.rt, s.m * k_local_, env.rt.pe())),
        b_(heap_filled(env.rt, k_local_ * s.n, env.rt.pe() + 11)),
        c_(env.rt.alloc<float>(m_local_ * s.n)),
        partial_(s.m * s.n, 0.0f) {}

  std::size_t bytes() const override { return s_.m * s_.n * sizeof(float); }

  void gemm_alone() override {
    gemm_grid<float>(env_.stream, kComputeBlocks, td::Tile<float>(partial_.data(), s_.m, s_.n),
                     td::Tile<const float>(a_.get(), s_.m, k_local_),
                     td::Tile<const float>(b_.get(), k_local_, s_.n));
  }

  peer::PeerTimes mpi_unfused(int warmup, int iters) override {
    return peer::gemm_then_reduce_scatter(
        env_.rt.pe(), env_.rt.n_pes(), [&] { gemm_alone(); }, partial_.data(), c_.get(),
        m_local_ * s_.n, warmup, iters);
  }

  Fused make(const Choice& choice) override {
    if (choice.pattern != OverlapPattern::automatic &&
        (choice.pattern != OverlapPattern::fused_sequential ||
         choice.direction != CommDirection::push)) {
      not_applicable("gemm_rs: " + choice_name(choice) + " is not implemented on this branch yet");
    }
    ops::GemmRsOptions options;
    options.compute_blocks = kComputeBlocks;
    auto op =
        std::make_shared<ops::GemmRs>(env_.rt, s_.m, s_.n, k_local_, ops::GemmDtype::f32, options);
    return {[this, op] {
              op->run(env_.stream, a_.get(), b_.get(), c_.get());
              env_.stream.synchronize();
            },
            "fused_sequential", "push"};
  }

 private:
  BenchEnv& env_;
  GemmShape s_;
  std::size_t m_local_, k_local_;
  Symmetric<float> a_, b_, c_;
  std::vector<float> partial_;  // the GEMM alone's C, MPI_Reduce_scatter_block's input
};

enum class OpKind { ag_gemm, gemm_rs };

const char* op_name(OpKind op) { return op == OpKind::ag_gemm ? "ag_gemm" : "gemm_rs"; }

// The extents of MxNxK each op splits over the PEs.
bool divisible(OpKind op, const GemmShape& s, std::size_t p) {
  switch (op) {
    case OpKind::ag_gemm:
      return s.m % p == 0 && s.n % p == 0;
    case OpKind::gemm_rs:
      return s.m % p == 0 && s.k % p == 0;
  }
  return false;
}

std::unique_ptr<Workload> make_workload(OpKind op, BenchEnv& env, const GemmShape& s) {
  switch (op) {
    case OpKind::ag_gemm:
      return std::make_unique<AgGemmWorkload>(env, s);
    case OpKind::gemm_rs:
      return std::make_unique<GemmRsWorkload>(env, s);
  }
  return nullptr;
}

// Square shapes (256^3 where fusing is expected to lose, then 1024^3 and 2048^3, GEMM-bound)
// and one communication-heavy shape: the extent the communicated matrix does not contain is
// small (N for ag_gemm, which moves A = M x K; K for the others, which move C = M x N), so
// moving the matrix costs about as much as the GEMM on a host core (measured: MPI_Allgather of
// 8192 x 1024 floats takes longer than the 8192 x 64 x 1024 GEMM at 2 PEs).
std::vector<GemmShape> default_shapes(OpKind op) {
  const GemmShape heavy = op == OpKind::ag_gemm ? GemmShape{8192, 64, 1024}  //
                                                : GemmShape{8192, 1024, 64};
  return {{256, 256, 256}, {1024, 1024, 1024}, {2048, 2048, 2048}, heavy};
}

// Timed calls per point unless --iters says: a 2048^3 call takes about a second here.
int default_iters(const GemmShape& s) {
  const double flops =
      2.0 * static_cast<double>(s.m) * static_cast<double>(s.n) * static_cast<double>(s.k);
  return flops >= 8e9 ? 1 : flops >= 1e9 ? 2 : 3;
}

// A choice the op refused (no row), and the op's message.
struct Skipped {
  std::string choice, why;
};

struct Measured {
  Choice choice;
  std::string pattern, direction;  // what the op resolved to
  std::vector<double> samples;
};

void run_shape(BenchEnv& env, OpKind op, const GemmShape& s) {
  Runtime& rt = env.rt;
  const int n_pes = rt.n_pes();
  const int iters = env.options.iters > 0 ? env.options.iters : default_iters(s);
  const int warmup = 1;
  std::unique_ptr<Workload> work = make_workload(op, env, s);

  std::vector<Measured> measured;
  std::vector<Skipped> skipped;
  for (const Choice& choice : all_choices()) {
    Fused fused;
    try {
      fused = work->make(choice);
    } catch (const Error& e) {
      if (e.code() != ErrorCode::invalid_argument) throw;
      skipped.push_back({choice_name(choice), e.message()});
      continue;
    }
    measured.push_back(
        {choice, fused.pattern, fused.direction, time_step(env, warmup, iters, fused.run)});
  }
  const std::vector<double> gemm_alone = time_step(env, warmup, iters, [&] { work->gemm_alone(); });
  const peer::PeerTimes mpi = work->mpi_unfused(warmup, iters);
  env.idle.arrive_and_wait();
  if (!env.report) return;

  auto row_for = [&](const std::string& variant, double time_us) {
    Row row;
    row.bench = "taxonomy";
    row.variant = variant;
    row.pes = n_pes;
    row.bytes = work->bytes();
    row.iters = iters;
    row.time_us = time_us;
    row.limit_time_us = median(gemm_alone);
    if (!mpi.us.empty()) row.peer_time_us = median(mpi.us);
    row.peer_note = mpi.unavailable;
    row.extra = {{"op", std::string(op_name(op))},
                 {"m", static_cast<std::int64_t>(s.m)},
                 {"n", static_cast<std::int64_t>(s.n)},
                 {"k", static_cast<std::int64_t>(s.k)},
                 {"compute_blocks", std::int64_t{kComputeBlocks}}};
    return row;
  };
  const Measured* best = nullptr;
  const Measured* automatic = nullptr;
  for (const Measured& m : measured) {
    Row row = row_for(choice_name(m.choice), median(m.samples));
    row.extra.push_back({"pattern", std::string(to_string(m.choice.pattern))});
    row.extra.push_back({"direction", std::string(to_string(m.choice.direction))});
    row.extra.push_back({"comm_blocks", std::int64_t{m.choice.comm_blocks}});
    if (m.choice.pattern == OverlapPattern::automatic) {
      row.extra.push_back({"chose", m.pattern + "/" + m.direction});
      automatic = &m;
    } else if (best == nullptr || median(m.samples) < median(best->samples)) {
      best = &m;
    }
    env.report->add(row);
  }
  env.report->add(row_for("gemm_only", median(gemm_alone)));
  if (!mpi.us.empty()) env.report->add(row_for("mpi_unfused", median(mpi.us)));
  for (const Skipped& skip : skipped) env.report->note("n/a " + skip.choice + ": " + skip.why);
  if (best == nullptr) return;
  // The op's verdict: the best explicit choice, what automatic chose and how far it is behind.
  Row summary = row_for("summary", median(best->samples));
  summary.extra.push_back({"best", choice_name(best->choice)});
  if (automatic != nullptr) {
    const double auto_us = median(automatic->samples);
    summary.extra.push_back({"auto_chose", automatic->pattern + "/" + automatic->direction});
    summary.extra.push_back({"auto_us", auto_us});
    summary.extra.push_back({"auto_vs_best", auto_us / median(best->samples)});
  }
  // The choices that got no row, and each distinct reason once.
  std::string names, reasons;
  for (const Skipped& skip : skipped) {
    names += (names.empty() ? "" : ",") + skip.choice;
    if (reasons.find(skip.why) == std::string::npos) {
      reasons += (reasons.empty() ? "" : " | ") + skip.why;
    }
  }
  summary.extra.push_back({"not_applicable", names});
  summary.extra.push_back({"not_applicable_why", reasons});
  env.report->add(summary);
}

}  // namespace

void run_taxonomy(BenchEnv& env) {
  const int n_pes = env.rt.n_pes();
  if (env.report) {
    env.report->note(
        "taxonomy: " + std::to_string(n_pes) + " PEs, fp32, global MxNxK; " +
        std::to_string(kComputeBlocks) +
        " compute blocks (+ comm_blocks where the pattern has them); 1 warm-up, then 3 timed "
        "calls (2 from 1e9 flops, 1 from 8e9) unless --iters; median on PE 0");
    env.report->note("limit = the GEMM alone (same engine, shape, tiles, compute blocks)");
    env.report->note("peer  = MPI-unfused: the MPI collective + the same GEMM");
  }
  for (const OpKind op : {OpKind::ag_gemm, OpKind::gemm_rs}) {
    const std::vector<GemmShape> shapes =
        env.options.shapes.empty() ? default_shapes(op) : env.options.shapes;
    for (const GemmShape& s : shapes) {
      if (!divisible(op, s, static_cast<std::size_t>(n_pes))) {
        throw Error(ErrorCode::invalid_argument, env.rt.pe(),
                    std::string("tessera-bench taxonomy: ") + op_name(op) + " shape " +
                        shape_name(s.m, s.n, s.k) +
                        ": the split extents must be multiples of the number of PEs (" +
                        std::to_string(n_pes) + ")");
      }
      run_shape(env, op, s);
    }
  }
}

}  // namespace tessera::bench
