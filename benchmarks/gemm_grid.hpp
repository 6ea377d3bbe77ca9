// Shared by the ag_gemm and gemm_rs benchmarks: the plain GEMM they compare against (the same
// gemm_tile engine the fused ops use, over the same row tiles and as many blocks) and the timing
// loop of a collective step.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "registry.hpp"
#include "tessera/device/group.hpp"
#include "tessera/device/ops/gemm_tile.hpp"
#include "tessera/device/tile.hpp"
#include "tessera/launch.hpp"
#include "timing.hpp"

namespace tessera::bench {

// C = A x B over `blk.grid_size()` blocks, tiles of tile_m x tile_n dealt round-robin.
struct GemmGridKernel {
  template <class T>
  void operator()(device::Block blk, device::Tile<float> c, device::Tile<const T> a,
                  device::Tile<const T> b, std::size_t tile_m, std::size_t tile_n) const {
    const std::size_t tiles_m = (c.rows + tile_m - 1) / tile_m;
    const std::size_t tiles_n = (c.cols + tile_n - 1) / tile_n;
    for (std::size_t w = static_cast<std::size_t>(blk.block_id()); w < tiles_m * tiles_n;
         w += static_cast<std::size_t>(blk.grid_size())) {
      const std::size_t r0 = (w / tiles_n) * tile_m, c0 = (w % tiles_n) * tile_n;
      const std::size_t rows = r0 + tile_m < c.rows ? tile_m : c.rows - r0;
      const std::size_t cols = c0 + tile_n < c.cols ? tile_n : c.cols - c0;
      device::ops::gemm_tile(blk, c.sub(r0, c0, rows, cols), a.sub(r0, 0, rows, a.cols),
                             b.sub(0, c0, b.rows, cols), false);
    }
  }
};

// Runs the GEMM on `stream` and waits for it.
template <class T>
void gemm_grid(Stream& stream, int blocks, device::Tile<float> c, device::Tile<const T> a,
               device::Tile<const T> b, std::size_t tile_m = 64, std::size_t tile_n = 256) {
  launch(stream, blocks, GemmGridKernel{}, c, a, b, tile_m, tile_n);
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
