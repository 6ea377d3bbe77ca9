// The driver the fused GEMM subcommands of tessera-bench share (ag_gemm, gemm_rs; a fifth op is
// one more FusedGemmBench): the shapes (--shapes or the op's defaults) and their check, the
// notes, the timing of every variant, and the rows with the limit (the GEMM alone, "gemm_only")
// and the peer (MPI) side by side. Each sample: all PEs leave an idle barrier, PE 0 times one call
// to completion.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "gemm_grid.hpp"
#include "mpi_peer.hpp"
#include "registry.hpp"
#include "tessera/error.hpp"

namespace tessera::bench {

// `count` operand values in [-0.5, 0.5), a pattern of `period` steps shifted by PE.
std::vector<float> filled(std::size_t count, int pe, std::size_t step, std::size_t period);

// One shape of one op: its variants timed into rows, then the limit and the peer.
class FusedGemmShapeRun {
 public:
  FusedGemmShapeRun(BenchEnv& env, const char* bench, const GemmShape& shape, int blocks, int iters)
      : env_(env), bench_(bench), shape_(shape), blocks_(blocks), iters_(iters) {}

  BenchEnv& env() const { return env_; }
  Runtime& rt() const { return env_.rt; }
  const GemmShape& shape() const { return shape_; }
  int blocks() const { return blocks_; }
  int iters() const { return iters_; }
  // The rows' `bytes`: what one PE moves (set it before the first time()).
  void set_bytes(std::size_t bytes) { row_bytes_ = bytes; }

  // Times `step` (collective) as the row `variant`.
  template <class Step>
  void time(const std::string& variant, Step&& step) {
    add(variant, time_step(env_, kWarmup, iters_, step));
  }
  // Times `gemm` as the row "gemm_only", the limit of every row.
  template <class Step>
  void limit(Step&& gemm) {
    limit_ = time_step(env_, kWarmup, iters_, gemm);
    add("gemm_only", limit_);
  }
  // The peer's samples (or why there are none): every row gets them, then is reported.
  void finish(const peer::PeerTimes& peer_times);

  static constexpr int kWarmup = 1;  // a 2048^3 call takes seconds on a CPU's cores

 private:
  void add(const std::string& variant, const std::vector<double>& samples);

  BenchEnv& env_;
  const char* bench_;
  GemmShape shape_;
  int blocks_, iters_;
  std::size_t row_bytes_ = 0;
  std::vector<double> limit_;
  std::vector<Row> rows_;
};

// Which of N and K each PE holds 1/P of, besides M.
enum class GemmSplit { n, k };

// What a fused GEMM subcommand says about itself.
struct FusedGemmBench {
  const char* name;               // "ag_gemm"
  std::vector<GemmShape> shapes;  // without --shapes
  GemmSplit split;
  const char* layout;  // what each PE holds: "M/P rows of A and N/P columns of B"
  const char* limit_note;
  const char* peer_note;
  void (*run_shape)(FusedGemmShapeRun& run);  // set_bytes(), the variants, limit(), finish()
};

// One shape of each op (bench_ag_gemm.cpp, bench_gemm_rs.cpp).
void ag_gemm_shape(FusedGemmShapeRun& run);
void gemm_rs_shape(FusedGemmShapeRun& run);

}  // namespace tessera::bench
