// tessera-bench gemm: GFLOP/s of the host tile GEMM engine (gemm_tile, one thread, PE 0 only) on
// square fp32 and bf16 problems. Variants:
//   fp32, bf16            gemm_tile on the whole problem (the host BLAS path when one is loaded);
//   fp32_tiles            gemm_tile over 64 x 256 tiles of C, as the fused ops' compute blocks call
//                         it with their default tiles (B's column panel, A's row panel per tile);
//   fp32_tiles256x512     the same over 256 x 512 tiles (what larger op tiles would reach);
//   portable_fp32/_bf16   the portable register-blocked kernel (the engine before issue 19).
// limit = the loaded BLAS's own cblas_sgemm on the same fp32 data, one call, one thread (issue 19:
// the GEMM a user would really call, not a peak model). TESSERA_BLAS chooses the BLAS (openblas,
// blis); without one the limit is unavailable. time_us is one whole C = A * B; cpu_gflops counts
// the thread's CPU time (less sensitive to a shared machine than the wall clock).
#include <cstdint>
#include <ctime>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "registry.hpp"
#include "tessera/device/ops/gemm_tile.hpp"
#include "tessera/device/ops/impl/host_blas.hpp"
#include "timing.hpp"

namespace tessera::bench {
namespace {

namespace td = tessera::device;

// Microseconds of CPU time the calling thread has used: unlike the wall clock, it does not count
// the time the scheduler gives other processes (the machine may be shared).
double thread_cpu_us() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e6 + static_cast<double>(t.tv_nsec) / 1e3;
}

struct Times {
  double wall_us, cpu_us;  // medians
};

template <class Fn>
Times median_time_us(int warmup, int iters, Fn&& fn) {
  std::vector<double> wall, cpu;
  for (int i = 0; i < warmup + iters; ++i) {
    const double t0 = now_us(), c0 = thread_cpu_us();
    fn();
    const double c1 = thread_cpu_us(), t1 = now_us();
    if (i >= warmup) {
      wall.push_back(t1 - t0);
      cpu.push_back(c1 - c0);
    }
  }
  return {median(wall), median(cpu)};
}

// C = A * B over tile_m x tile_n tiles of C, one gemm_tile call each (one thread).
template <class T>
void gemm_tiles(td::Tile<float> c, td::Tile<const T> a, td::Tile<const T> b, std::size_t tile_m,
                std::size_t tile_n) {
  for (std::size_t r0 = 0; r0 < c.rows; r0 += tile_m) {
    const std::size_t rows = c.rows - r0 < tile_m ? c.rows - r0 : tile_m;
    for (std::size_t c0 = 0; c0 < c.cols; c0 += tile_n) {
      const std::size_t cols = c.cols - c0 < tile_n ? c.cols - c0 : tile_n;
      td::ops::gemm_tile(td::Thread{}, c.sub(r0, c0, rows, cols), a.sub(r0, 0, rows, a.cols),
                         b.sub(0, c0, b.rows, cols), false);
    }
  }
}

}  // namespace

void run_gemm(BenchEnv& env) {
  const std::vector<std::size_t> sizes =
      env.options.sizes.empty() ? std::vector<std::size_t>{512, 1024, 2048} : env.options.sizes;
  const int iters = env.options.iters > 0 ? env.options.iters : 3;
  const td::host_blas::Info& blas = td::host_blas::info();
  if (env.report) {
    env.report->note("gemm: C = A * B, m = n = k = size (bytes column), one thread on PE 0");
    if (blas.available) {
      env.report->note("limit = cblas_sgemm of " + blas.name + ", same fp32 data, one thread");
      env.report->note(std::string("gemm_tile: fp32 and bf16 through that BLAS") +
                       (blas.has_sbgemm ? " (bf16 by its sbgemm)" : " (bf16 widened to fp32)"));
    } else {
      env.report->note("limit = unavailable: " + blas.status);
    }
    env.report->note("peer  = none (the limit is the GEMM a user would call)");
  }
  if (env.rt.pe() == 0) {
    for (const std::size_t s : sizes) {
      std::mt19937 rng(1);
      std::uniform_real_distribution<float> dist(-1, 1);
      std::vector<float> a(s * s), b(s * s), c(s * s);
      for (float& v : a) v = dist(rng);
      for (float& v : b) v = dist(rng);
      std::vector<td::bf16> a16(s * s), b16(s * s);
      for (std::size_t i = 0; i < s * s; ++i) {
        a16[i] = td::ops::to_bf16(a[i]);
        b16[i] = td::ops::to_bf16(b[i]);
      }
      const td::Tile<float> ct(c.data(), s, s);
      const td::Tile<const float> at(a.data(), s, s), bt(b.data(), s, s);
      const td::Tile<const td::bf16> at16(a16.data(), s, s), bt16(b16.data(), s, s);
      const double flop =
          2.0 * static_cast<double>(s) * static_cast<double>(s) * static_cast<double>(s);
      const int warmup = 1;
      std::optional<Times> limit;
      if (blas.available) {
        limit = median_time_us(warmup, iters, [&] {
          td::host_blas::sgemm(s, s, s, a.data(), s, b.data(), s, c.data(), s, false);
        });
      }
      struct Variant {
        const char* name;
        Times t;
      };
      const Variant variants[] = {
          {"fp32", median_time_us(warmup, iters,
                                  [&] { td::ops::gemm_tile(td::Thread{}, ct, at, bt, false); })},
          {"bf16",
           median_time_us(warmup, iters,
                          [&] { td::ops::gemm_tile(td::Thread{}, ct, at16, bt16, false); })},
          {"fp32_tiles", median_time_us(warmup, iters, [&] { gemm_tiles(ct, at, bt, 64, 256); })},
          {"fp32_tiles256x512",
           median_time_us(warmup, iters, [&] { gemm_tiles(ct, at, bt, 256, 512); })},
          {"portable_fp32", median_time_us(warmup, iters,
                                           [&] {
                                             td::ops::detail::gemm_tile_blocked(td::Thread{}, ct,
                                                                                at, bt, false);
                                           })},
          {"portable_bf16", median_time_us(warmup, iters, [&] {
             td::ops::detail::gemm_tile_blocked(td::Thread{}, ct, at16, bt16, false);
           })}};
      for (const Variant& v : variants) {
        Row row;
        row.bench = "gemm";
        row.variant = v.name;
        row.pes = 1;
        row.bytes = s;
        row.iters = iters;
        row.time_us = v.t.wall_us;
        if (limit) row.limit_time_us = limit->wall_us;
        row.peer_note = "none: the limit is the BLAS";
        row.extra.push_back({"m", static_cast<std::int64_t>(s)});
        row.extra.push_back({"gflops", flop / (v.t.wall_us * 1e3)});
        row.extra.push_back({"cpu_gflops", flop / (v.t.cpu_us * 1e3)});
        if (limit) {
          row.extra.push_back({"blas_gflops", flop / (limit->wall_us * 1e3)});
          row.extra.push_back({"blas_cpu_gflops", flop / (limit->cpu_us * 1e3)});
          row.extra.push_back({"cpu_fraction", limit->cpu_us / v.t.cpu_us});
        }
        if (env.report) env.report->add(row);
      }
    }
  }
  env.idle.arrive_and_wait();
}

}  // namespace tessera::bench
