// tessera-bench all_reduce: tessera::ops::all_reduce of `bytes` of f32 per PE (sum) over the
// world team, each algorithm (one_shot, two_shot, ring, atomic) and automatic. Each sample is
// one call on PE 0 (enqueue + stream synchronize), every PE having left a barrier just before
// it; the median is reported.
//   limit: memcpy of 2 * (P - 1) / P * bytes by one thread of PE 0 between private warmed-up
//          buffers while the other PEs idle. The model: a bandwidth-optimal all-reduce
//          (reduce-scatter, then all-gather) makes every PE receive (P - 1) / P of the data in
//          each phase, so 2 * (P - 1) / P * bytes must cross into each PE; the arithmetic is
//          free and a copy of those bytes is the fastest they can move.
//   peer:  MPI_Allreduce (MPI_FLOAT, MPI_SUM) of the same floats, timed the same way.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "collective_timing.hpp"
#include "mpi_peer.hpp"
#include "registry.hpp"
#include "split.hpp"
#include "tessera/ops/all_reduce.hpp"
#include "timing.hpp"

namespace tessera::bench {
namespace {

constexpr int kDefaultIters = 50;

std::vector<std::size_t> default_sizes() {
  std::vector<std::size_t> sizes;
  for (std::size_t s = 4; s <= (std::size_t{16} << 20); s *= 8) sizes.push_back(s);
  sizes.push_back(std::size_t{16} << 20);
  return sizes;  // 4 B, 32 B, ... 2 MiB, 16 MiB per PE
}

}  // namespace

void run_all_reduce(BenchEnv& env) {
  Runtime& rt = env.rt;
  std::vector<std::size_t> sizes = env.options.sizes.empty() ? default_sizes() : env.options.sizes;
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  const int iters = env.options.iters > 0 ? env.options.iters : kDefaultIters;
  const int warmup = warmup_iters(iters);
  const int n = rt.n_pes();
  std::size_t max_count = 1;
  for (std::size_t s : sizes) max_count = std::max(max_count, s / sizeof(float));

  const Team world = team_world(rt);
  Symmetric<float> recv = rt.alloc<float>(max_count);
  std::vector<float> send(max_count, static_cast<float>(rt.pe() + 1));
  const std::string peer_reason = peer::unavailable_reason(rt.pe(), n);
  if (env.report) {
    env.report->note("all_reduce: " + std::to_string(n) + " PEs, f32 sum, bytes = per PE, " +
                     std::to_string(iters) + " timed calls after " + std::to_string(warmup) +
                     " warm-up; median per call (PE 0)");
    env.report->note(
        "limit = memcpy of 2 (P - 1) / P * bytes (what must cross into a PE in a "
        "reduce-scatter + all-gather) by one thread, private buffers");
    env.report->note("peer  = MPI_Allreduce" +
                     (peer_reason.empty() ? std::string() : " -- " + peer_reason));
  }
  env.idle.arrive_and_wait();

  for (const std::size_t bytes : sizes) {
    const std::size_t count = std::max<std::size_t>(1, bytes / sizeof(float));
    std::optional<double> limit;
    if (rt.pe() == 0) {
      limit = memcpy_median(
          2 * count * sizeof(float) * static_cast<std::size_t>(n - 1) / static_cast<std::size_t>(n),
          warmup, iters);
    }
    env.idle.arrive_and_wait();
    peer::PeerTimes peer_times = peer::allreduce(rt.pe(), n, count, warmup, iters);
    for (const auto algo :
         {ops::AllReduceAlgo::one_shot, ops::AllReduceAlgo::two_shot, ops::AllReduceAlgo::ring,
          ops::AllReduceAlgo::atomic, ops::AllReduceAlgo::automatic}) {
      const std::string resolved =
          ops::to_string(ops::resolve_all_reduce_algo(count, ops::Dtype::f32, n, algo));
      measure(env,
              {"all_reduce", algo == ops::AllReduceAlgo::automatic ? "auto" : ops::to_string(algo),
               resolved, count * sizeof(float), iters, limit, &peer_times},
              [&] {
                ops::all_reduce(rt, env.stream, world, send.data(), recv.get(), count,
                                ops::Dtype::f32, ops::ReduceOp::sum, algo);
              });
    }
    env.idle.arrive_and_wait();
  }
}

}  // namespace tessera::bench
