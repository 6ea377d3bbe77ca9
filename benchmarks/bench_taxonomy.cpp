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
//   time:  the median, over rounds, of one call until every PE has completed it (all PEs leave an
//          idle barrier, PE 0 times until all have reached the next one);
//   limit: the GEMM alone: the host BLAS's sgemm on the same shape, one single-threaded call per
//          compute block (gemm_grid.hpp), no communication, so fraction_of_limit is the fraction
//          of the BLAS GEMM alone the op reaches (issue 19);
//   peer:  MPI-unfused: the MPI collective and the same BLAS GEMM one after the other
//   (MPI_Allgather
//          then GEMM; GEMM then MPI_Reduce_scatter_block / MPI_Allreduce / MPI_Allgather of
//          column blocks), so speedup_vs_peer is the speedup over MPI-unfused; timed alike.
// A choice an op refuses (its constructor throws invalid_argument, or transport: pull with a peer
// not mapped) gets no row; the op's summary row names it under not_applicable, with the reason
// (table: a # line).
#include <algorithm>
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
#include "tessera/ops/gemm_ar.hpp"
#include "tessera/ops/gemm_as.hpp"
#include "tessera/ops/gemm_rs.hpp"
#include "tessera/ops/overlap.hpp"

namespace tessera::bench {
namespace {

namespace td = tessera::device;

// Blocks that compute, in the fused ops and in the GEMM alone; the communicating blocks of
// producer_consumer and workgroup_specialized come on top.
constexpr int kComputeBlocks = 2;
constexpr int kCommBlockCounts[] = {1, 2, 4};

using ops::CommDirection;
using ops::OpKind;
using ops::OverlapPattern;
using ops::to_string;

// One point of the taxonomy: how the fused op is asked to overlap.
struct Choice {
  OverlapPattern pattern = OverlapPattern::automatic;
  CommDirection direction = CommDirection::automatic;
  int comm_blocks = 1;
};

std::string choice_name(const Choice& c) {
  if (c.pattern == OverlapPattern::automatic) return "automatic";
  std::string name = to_string(c.pattern);
  if (c.direction != CommDirection::automatic) name += std::string("/") + to_string(c.direction);
  if (c.pattern == OverlapPattern::producer_consumer ||
      c.pattern == OverlapPattern::workgroup_specialized) {
    name += "/cb" + std::to_string(c.comm_blocks);
  }
  return name;
}

// Every explicit choice, then automatic. bulk_synchronous has no direction of its own (the
// library collective picks its algorithm), fused_sequential no communicating blocks.
std::vector<Choice> all_choices() {
  std::vector<Choice> choices = {{OverlapPattern::bulk_synchronous, CommDirection::automatic, 1}};
  for (const OverlapPattern p :
       {OverlapPattern::producer_consumer, OverlapPattern::workgroup_specialized,
        OverlapPattern::fused_sequential}) {
    for (const CommDirection d : {CommDirection::push, CommDirection::pull}) {
      if (p == OverlapPattern::fused_sequential) {
        choices.push_back({p, d, 1});
      } else {
        for (const int cb : kCommBlockCounts) choices.push_back({p, d, cb});
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

// One op on one shape: its operands, the GEMM alone, the MPI-unfused baseline and the fused op.
// Every buffer lies in the heap: every pattern and direction may use them in place, and the GEMM
// alone and MPI-unfused touch the same kind of memory as the fused op.
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
  // does not apply, Error(transport) where it needs peers this PE does not map.
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
        a_full_(heap_filled(env.rt, s.m * s.k, env.rt.pe() + 5)) {}

  std::size_t bytes() const override { return m_local_ * s_.k * sizeof(float); }

  void gemm_alone() override {
    gemm_grid<float>(env_.stream, kComputeBlocks, td::Tile<float>(c_.get(), s_.m, n_local_),
                     td::Tile<const float>(a_full_.get(), s_.m, s_.k),
                     td::Tile<const float>(b_.get(), s_.k, n_local_));
  }

  peer::PeerTimes mpi_unfused(int warmup, int iters) override {
    return peer::allgather_then_gemm(
        env_.rt.pe(), env_.rt.n_pes(), a_shard_.get(), a_full_.get(), bytes(),
        [&] { gemm_alone(); }, warmup, iters, /*until_all_done=*/true);
  }

  Fused make(const Choice& choice) override {
    ops::AgGemmOptions options;
    options.pattern = choice.pattern;
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
            to_string(op->pattern()), ops::to_string(op->variant())};
  }

 private:
  BenchEnv& env_;
  GemmShape s_;
  std::size_t m_local_, n_local_;
  Symmetric<float> a_shard_, b_, c_;
  Symmetric<float> a_full_;  // MPI_Allgather's receive buffer; the GEMM alone's A
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
        partial_(env.rt.alloc<float>(s.m * s.n)) {}

  std::size_t bytes() const override { return s_.m * s_.n * sizeof(float); }

  void gemm_alone() override {
    gemm_grid<float>(env_.stream, kComputeBlocks, td::Tile<float>(partial_.get(), s_.m, s_.n),
                     td::Tile<const float>(a_.get(), s_.m, k_local_),
                     td::Tile<const float>(b_.get(), k_local_, s_.n));
  }

  peer::PeerTimes mpi_unfused(int warmup, int iters) override {
    return peer::gemm_then_reduce_scatter(
        env_.rt.pe(), env_.rt.n_pes(), [&] { gemm_alone(); }, partial_.get(), c_.get(),
        m_local_ * s_.n, warmup, iters, /*until_all_done=*/true);
  }

  Fused make(const Choice& choice) override {
    ops::GemmRsOptions options;
    options.pattern = choice.pattern;
    options.direction = choice.direction;
    options.comm_blocks = choice.comm_blocks;
    options.compute_blocks = kComputeBlocks;
    auto op =
        std::make_shared<ops::GemmRs>(env_.rt, s_.m, s_.n, k_local_, ops::GemmDtype::f32, options);
    return {[this, op] {
              op->run(env_.stream, a_.get(), b_.get(), c_.get());
              env_.stream.synchronize();
            },
            to_string(op->pattern()), to_string(op->direction())};
  }

 private:
  BenchEnv& env_;
  GemmShape s_;
  std::size_t m_local_, k_local_;
  Symmetric<float> a_, b_, c_;
  Symmetric<float> partial_;  // the GEMM alone's C, MPI_Reduce_scatter_block's input
};

// GemmAr and GemmAs take the same options.
template <class Options>
Options fused_options(const Choice& choice) {
  Options options;
  options.pattern = choice.pattern;
  options.direction = choice.direction;
  options.comm_blocks = choice.comm_blocks;
  options.compute_blocks = kComputeBlocks;
  return options;
}

class GemmArWorkload final : public Workload {
 public:
  GemmArWorkload(BenchEnv& env, const GemmShape& s)
      : env_(env),
        s_(s),
        k_local_(s.k / static_cast<std::size_t>(env.rt.n_pes())),
        a_(heap_filled(env.rt, s.m * k_local_, env.rt.pe())),
        b_(heap_filled(env.rt, k_local_ * s.n, env.rt.pe() + 13)),
        c_(env.rt.alloc<float>(s.m * s.n)),
        partial_(env.rt.alloc<float>(s.m * s.n)) {}

  std::size_t bytes() const override { return s_.m * s_.n * sizeof(float); }

  void gemm_alone() override {
    gemm_grid<float>(env_.stream, kComputeBlocks, td::Tile<float>(partial_.get(), s_.m, s_.n),
                     td::Tile<const float>(a_.get(), s_.m, k_local_),
                     td::Tile<const float>(b_.get(), k_local_, s_.n));
  }

  peer::PeerTimes mpi_unfused(int warmup, int iters) override {
    return peer::gemm_then_allreduce(
        env_.rt.pe(), env_.rt.n_pes(), [&] { gemm_alone(); }, partial_.get(), c_.get(), s_.m * s_.n,
        warmup, iters, /*until_all_done=*/true);
  }

  Fused make(const Choice& choice) override {
    auto op = std::make_shared<ops::GemmAr>(env_.rt, s_.m, s_.n, k_local_, ops::GemmDtype::f32,
                                            fused_options<ops::GemmArOptions>(choice));
    return {[this, op] {
              op->run(env_.stream, a_.get(), b_.get(), c_.get());
              env_.stream.synchronize();
            },
            to_string(op->pattern()), to_string(op->direction())};
  }

 private:
  BenchEnv& env_;
  GemmShape s_;
  std::size_t k_local_;
  Symmetric<float> a_, b_, c_;
  Symmetric<float> partial_;  // the GEMM alone's C, MPI_Allreduce's input
};

class GemmAsWorkload final : public Workload {
 public:
  GemmAsWorkload(BenchEnv& env, const GemmShape& s)
      : env_(env),
        s_(s),
        n_local_(s.n / static_cast<std::size_t>(env.rt.n_pes())),
        a_(heap_filled(env.rt, s.m * s.k, env.rt.pe())),
        b_(heap_filled(env.rt, s.k * n_local_, env.rt.pe() + 19)),
        c_(env.rt.alloc<float>(s.m * s.n)),
        block_(env.rt.alloc<float>(s.m * n_local_)) {}

  std::size_t bytes() const override { return s_.m * n_local_ * sizeof(float); }

  void gemm_alone() override {
    gemm_grid<float>(env_.stream, kComputeBlocks, td::Tile<float>(block_.get(), s_.m, n_local_),
                     td::Tile<const float>(a_.get(), s_.m, s_.k),
                     td::Tile<const float>(b_.get(), s_.k, n_local_));
  }

  peer::PeerTimes mpi_unfused(int warmup, int iters) override {
    return peer::gemm_then_allgather_columns(
        env_.rt.pe(), env_.rt.n_pes(), [&] { gemm_alone(); }, block_.get(), c_.get(), s_.m,
        n_local_, warmup, iters, /*until_all_done=*/true);
  }

  Fused make(const Choice& choice) override {
    auto op = std::make_shared<ops::GemmAs>(env_.rt, s_.m, n_local_, s_.k, ops::GemmDtype::f32,
                                            fused_options<ops::GemmAsOptions>(choice));
    return {[this, op] {
              op->run(env_.stream, a_.get(), b_.get(), c_.get());
              env_.stream.synchronize();
            },
            to_string(op->pattern()), to_string(op->direction())};
  }

 private:
  BenchEnv& env_;
  GemmShape s_;
  std::size_t n_local_;
  Symmetric<float> a_, b_, c_;
  Symmetric<float> block_;  // the GEMM alone's column block, MPI_Allgather's input
};

// The extents of MxNxK each op splits over the PEs.
bool divisible(OpKind op, const GemmShape& s, std::size_t p) {
  switch (op) {
    case OpKind::ag_gemm:
      return s.m % p == 0 && s.n % p == 0;
    case OpKind::gemm_rs:
      return s.m % p == 0 && s.k % p == 0;
    case OpKind::gemm_ar:
      return s.k % p == 0;
    case OpKind::gemm_as:
      return s.n % p == 0;
    case OpKind::all_reduce_rmsnorm:
      break;
  }
  return false;
}

std::unique_ptr<Workload> make_workload(OpKind op, BenchEnv& env, const GemmShape& s) {
  switch (op) {
    case OpKind::ag_gemm:
      return std::make_unique<AgGemmWorkload>(env, s);
    case OpKind::gemm_rs:
      return std::make_unique<GemmRsWorkload>(env, s);
    case OpKind::gemm_ar:
      return std::make_unique<GemmArWorkload>(env, s);
    case OpKind::gemm_as:
      return std::make_unique<GemmAsWorkload>(env, s);
    case OpKind::all_reduce_rmsnorm:
      break;
  }
  return nullptr;
}

// Square shapes (256^3 where fusing is expected to lose, then 1024^3 and 2048^3, GEMM-bound)
// and one communication-heavy shape: the extent the communicated matrix does not contain is
// small (N for ag_gemm, which moves A = M x K; K for the others, which move C = M x N), so
// moving the matrix costs about as much as the GEMM on a host core (measured at 4 PEs: MPI-unfused
// takes 1.3-2.2x the GEMM alone on them, 0.9-1.1x on 1024^3 and 2048^3; docs/perf/earlier-runs.md).
std::vector<GemmShape> default_shapes(OpKind op) {
  const GemmShape heavy = op == OpKind::ag_gemm ? GemmShape{8192, 64, 1024}  //
                                                : GemmShape{8192, 1024, 64};
  return {{256, 256, 256}, {1024, 1024, 1024}, {2048, 2048, 2048}, heavy};
}

// Rounds per shape unless --iters says: each round times every variant once, and a 2048^3 call
// takes about a second on this machine's cores, a 256^3 one a millisecond.
int default_iters(const GemmShape& s) {
  const double flops =
      2.0 * static_cast<double>(s.m) * static_cast<double>(s.n) * static_cast<double>(s.k);
  return flops < 1e8 ? 15 : flops < 2e9 ? 5 : 2;
}

// Times `step` (collective) `warmup + iters` times; each sample runs from the idle barrier every
// PE leaves to the one every PE reaches after its step, so it ends when the last PE is done.
// PE 0 alone would finish early whenever the oversubscribed cores favour it (a fused op lets PE 0
// go once its own tiles are complete, while the GEMM alone keeps every PE busy to the end).
// Returns PE 0's samples (empty elsewhere).
template <class Step>
std::vector<double> time_all_done(BenchEnv& env, int warmup, int iters, Step&& step) {
  std::vector<double> samples;
  for (int i = 0; i < warmup + iters; ++i) {
    env.idle.arrive_and_wait();
    const double t0 = now_us();
    step();
    env.idle.arrive_and_wait();
    const double t1 = now_us();
    if (env.rt.pe() == 0 && i >= warmup) samples.push_back(t1 - t0);
  }
  return samples;
}

// A choice the op refused (no row), and the op's message.
struct Skipped {
  std::string choice, why;
};

bool same(const Choice& a, const Choice& b) {
  return a.pattern == b.pattern && a.direction == b.direction && a.comm_blocks == b.comm_blocks;
}

struct Measured {
  Choice choice;
  std::string pattern, direction;  // what the op resolved to
  std::vector<double> samples;
};

void run_shape(BenchEnv& env, OpKind op, const GemmShape& s) {
  Runtime& rt = env.rt;
  const int n_pes = rt.n_pes();
  const int iters = env.options.iters > 0 ? env.options.iters : default_iters(s);
  std::unique_ptr<Workload> work = make_workload(op, env, s);

  // Rounds: each round constructs every applicable choice in turn and times one call of it (after
  // one untimed call in the first round, and in every round of the cheap shapes), then the GEMM
  // alone and MPI-unfused. The load other processes put on the cores drifts over a run; rounds
  // spread each variant's samples over the whole run instead of giving each its own stretch.
  const std::vector<Choice> choices = all_choices();
  std::vector<Measured> measured;  // in the order of `choices`, refused ones left out
  std::vector<Skipped> skipped;
  std::vector<double> gemm_alone;
  peer::PeerTimes mpi;
  const bool cheap = default_iters(s) > 2;
  for (int round = 0; round < iters; ++round) {
    const int warmup = round == 0 || cheap ? 1 : 0;
    std::size_t next = 0;
    for (const Choice& choice : choices) {
      if (round > 0 && (next == measured.size() || !same(measured[next].choice, choice))) {
        continue;  // refused in round 0
      }
      Fused fused;
      try {
        fused = work->make(choice);
      } catch (const Error& e) {
        const bool refused =
            e.code() == ErrorCode::invalid_argument || e.code() == ErrorCode::transport;
        if (!refused || round > 0) throw;
        skipped.push_back({choice_name(choice), e.message()});
        continue;
      }
      if (round == 0) measured.push_back({choice, fused.pattern, fused.direction, {}});
      const std::vector<double> t = time_all_done(env, warmup, 1, fused.run);
      measured[next].samples.insert(measured[next].samples.end(), t.begin(), t.end());
      ++next;
    }
    const std::vector<double> g = time_all_done(env, warmup, 1, [&] { work->gemm_alone(); });
    gemm_alone.insert(gemm_alone.end(), g.begin(), g.end());
    const peer::PeerTimes m = work->mpi_unfused(warmup, 1);
    mpi.unavailable = m.unavailable;
    mpi.us.insert(mpi.us.end(), m.us.begin(), m.us.end());
  }
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
    row.extra = {{"op", std::string(to_string(op))},
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
        " compute blocks (+ comm_blocks where the pattern has them); rounds (15 below 1e8 "
        "flops, 5 below 2e9, else 2; --iters N: N), each timing every variant once, an untimed "
        "call first in round 1 (every round below 2e9 flops); median on PE 0 of the time until "
        "every PE is done");
    env.report->note("limit = the BLAS GEMM alone (same shape, one sgemm per compute block): " +
                     device::host_blas::info().name);
    env.report->note("peer  = MPI-unfused: the MPI collective + the same BLAS GEMM");
  }
  for (const OpKind op : {OpKind::ag_gemm, OpKind::gemm_rs, OpKind::gemm_ar, OpKind::gemm_as}) {
    const std::vector<GemmShape> shapes =
        env.options.shapes.empty() ? default_shapes(op) : env.options.shapes;
    for (const GemmShape& s : shapes) {
      if (!divisible(op, s, static_cast<std::size_t>(n_pes))) {
        throw Error(ErrorCode::invalid_argument, env.rt.pe(),
                    std::string("tessera-bench taxonomy: ") + to_string(op) + " shape " +
                        shape_name(s.m, s.n, s.k) +
                        ": the split extents must be multiples of the number of PEs (" +
                        std::to_string(n_pes) + ")");
      }
      run_shape(env, op, s);
    }
  }
}

}  // namespace tessera::bench
