// Shared by the ag_gemm, gemm_rs and taxonomy benchmarks: the plain GEMM they compare against
// (their limit, and the GEMM of the unfused and MPI baselines) and the timing loop of a collective
// step.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "registry.hpp"
#include "tessera/device/group.hpp"
#include "tessera/device/ops/gemm_tile.hpp"
#include "tessera/device/ops/impl/host_blas.hpp"
#include "tessera/device/tile.hpp"
#include "tessera/launch.hpp"
#include "timing.hpp"

namespace tessera::bench {

// C = A x B over `blk.grid_size()` blocks, each multiplying one contiguous stripe of C's rows in
// one gemm_tile call: with a host BLAS loaded (tessera/device/ops/impl/host_blas.hpp) that is one
// single-threaded cblas_sgemm per block, i.e. the BLAS GEMM a user would call, run on as many
// threads as the fused op's compute blocks (issue 19: the honest limit and baseline GEMM).
// Without a BLAS it is the portable kernel on the same stripes.
struct GemmGridKernel {
  template <class T>
  void operator()(device::Block blk, device::Tile<float> c, device::Tile<const T> a,
                  device::Tile<const T> b) const {
    const auto blocks = static_cast<std::size_t>(blk.grid_size());
    const std::size_t per = (c.rows + blocks - 1) / blocks;
    const std::size_t r0 = static_cast<std::size_t>(blk.block_id()) * per;
    if (r0 >= c.rows) return;
    const std::size_t rows = c.rows - r0 < per ? c.rows - r0 : per;
    device::ops::gemm_tile(blk, c.sub(r0, 0, rows, c.cols), a.sub(r0, 0, rows, a.cols), b, false);
  }
};

// Runs the GEMM on `stream` over `blocks` blocks and waits for it.
template <class T>
void gemm_grid(Stream& stream, int blocks, device::Tile<float> c, device::Tile<const T> a,
               device::Tile<const T> b) {
  launch(stream, blocks, GemmGridKernel{}, c, a, b);
  stream.synchronize();
}

// Times `step` (collective: every PE runs it) `warmup + iters` times, all PEs leaving an idle
// barrier before each; returns PE 0's timed samples (empty elsewhere).
template <class Step>
std::vector<double> time_step(BenchEnv& env, int warmup, int iters, Step&& step) {
  std::vector<double> samples;
  for (int i = 0; i < warmup + iters; ++i) {
    env.idle.arrive_and_wait();
    const double t0 = now_us();
    step();
    const double t1 = now_us();
    if (env.rt.pe() == 0 && i >= warmup) samples.push_back(t1 - t0);
  }
  env.idle.arrive_and_wait();
  return samples;
}

// "2048x256x2048".
inline std::string shape_name(std::size_t m, std::size_t n, std::size_t k) {
  return std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
}

}  // namespace tessera::bench
