// tessera-bench gemm: GFLOP/s of the host tile GEMM engine (gemm_tile, one thread, PE 0 only) on
// square fp32 and bf16 problems. limit = the core's fp32 peak (2 FMA units x 8 lanes x 2 flop x
// clock, clock read from /proc/cpuinfo); peer = BLAS sgemm when tessera-bench was built with one
// (find_package(BLAS)), on the same fp32 data. time_us is one whole C = A * B.
#include <cstdint>
#include <ctime>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "registry.hpp"
#include "tessera/device/ops/gemm_tile.hpp"
#include "timing.hpp"

#if TESSERA_BENCH_HAVE_BLAS
extern "C" void sgemm_(const char* transa, const char* transb, const int* m, const int* n,
                       const int* k, const float* alpha, const float* a, const int* lda,
                       const float* b, const int* ldb, const float* beta, float* c, const int* ldc);
#endif

namespace tessera::bench {
namespace {

namespace td = tessera::device;

// The clock of core 0 in GHz from /proc/cpuinfo ("cpu MHz"), or 0 when unknown.
double clock_ghz() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("cpu MHz", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) return std::stod(line.substr(colon + 1)) / 1000.0;
    }
  }
  return 0.0;
}

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

}  // namespace

void run_gemm(BenchEnv& env) {
  const std::vector<std::size_t> sizes =
      env.options.sizes.empty() ? std::vector<std::size_t>{256, 512, 1024} : env.options.sizes;
  const int iters = env.options.iters > 0 ? env.options.iters : 5;
  const double ghz = clock_ghz();
  const double peak_gflops = 2 * 8 * 2 * ghz;
  if (env.report) {
    env.report->note("gemm: C = A * B, m = n = k = size (bytes column), one thread on PE 0");
    env.report->note("limit = fp32 peak " + std::to_string(peak_gflops) + " GFLOP/s (" +
                     std::to_string(ghz) + " GHz x 2 FMA x 8 lanes x 2)");
#if TESSERA_BENCH_HAVE_BLAS
    env.report->note("peer  = BLAS sgemm_ (the BLAS tessera-bench was linked with)");
#else
    env.report->note("peer  = unavailable: tessera-bench was built without BLAS");
#endif
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
      const double flop =
          2.0 * static_cast<double>(s) * static_cast<double>(s) * static_cast<double>(s);
      const int warmup = 1;
      const Times fp32 = median_time_us(warmup, iters, [&] {
        td::ops::gemm_tile(td::Thread{}, td::Tile<float>(c.data(), s, s),
                           td::Tile<const float>(a.data(), s, s),
                           td::Tile<const float>(b.data(), s, s), false);
      });
      const Times bf16_times = median_time_us(warmup, iters, [&] {
        td::ops::gemm_tile(td::Thread{}, td::Tile<float>(c.data(), s, s),
                           td::Tile<const td::bf16>(a16.data(), s, s),
                           td::Tile<const td::bf16>(b16.data(), s, s), false);
      });
      std::optional<double> blas_us;
#if TESSERA_BENCH_HAVE_BLAS
      blas_us =
          median_time_us(warmup, iters, [&] {
            // Row-major C = A * B is column-major C^T = B^T * A^T.
            const int n = static_cast<int>(s);
            const float one = 1, zero = 0;
            sgemm_("N", "N", &n, &n, &n, &one, b.data(), &n, a.data(), &n, &zero, c.data(), &n);
          }).wall_us;
#endif
      const double limit_us = peak_gflops > 0 ? flop / (peak_gflops * 1e3) : 0;
      for (const bool bf16 : {false, true}) {
        Row row;
        row.bench = "gemm";
        row.variant = bf16 ? "bf16" : "fp32";
        row.pes = 1;
        row.bytes = s;
        row.iters = iters;
        const Times& t = bf16 ? bf16_times : fp32;
        row.time_us = t.wall_us;
        if (limit_us > 0) row.limit_time_us = limit_us;
        row.peer_time_us = blas_us;
        if (!blas_us) row.peer_note = "unavailable: built without BLAS";
        row.extra.push_back({"m", static_cast<std::int64_t>(s)});
        row.extra.push_back({"gflops", flop / (row.time_us * 1e3)});
        row.extra.push_back({"cpu_gflops", flop / (t.cpu_us * 1e3)});
        if (blas_us) row.extra.push_back({"blas_gflops", flop / (*blas_us * 1e3)});
        if (env.report) env.report->add(row);
      }
    }
  }
  env.idle.arrive_and_wait();
}

}  // namespace tessera::bench
