// tessera-bench all_gather: tessera::ops::all_gather of `bytes` per PE over all PEs, one-shot,
// ring and automatic. Each sample is one call on PE 0 (enqueue + stream synchronize), every PE
// having left a barrier just before it; the median is reported.
//   limit: memcpy of the (P - 1) * bytes every PE must receive, by one thread of PE 0 between
//          private warmed-up buffers while the other PEs idle;
//   peer:  MPI_Allgather of the same bytes, timed the same way.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "mpi_peer.hpp"
#include "registry.hpp"
#include "split.hpp"
#include "tessera/ops/all_gather.hpp"
#include "timing.hpp"

namespace tessera::bench {
namespace {

constexpr int kDefaultIters = 50;

std::vector<std::size_t> default_sizes() {
  std::vector<std::size_t> sizes;
  for (std::size_t s = 4096; s <= (std::size_t{16} << 20); s *= 4) sizes.push_back(s);
  return sizes;  // 4 KiB ... 16 MiB per PE
}

std::vector<double> memcpy_times(std::size_t bytes, int rounds) {
  std::vector<std::uint8_t> src(bytes, 7), dst(bytes, 1);
  std::vector<double> times;
  for (int r = 0; r < rounds; ++r) {
    const double t0 = now_us();
    std::memcpy(dst.data(), src.data(), bytes);
    times.push_back(now_us() - t0);
    src[static_cast<std::size_t>(r) % bytes] = static_cast<std::uint8_t>(r);
  }
  return times;
}

}  // namespace

void run_all_gather(BenchEnv& env) {
  Runtime& rt = env.rt;
  const std::vector<std::size_t> sizes =
      env.options.sizes.empty() ? default_sizes() : env.options.sizes;
  const int iters = env.options.iters > 0 ? env.options.iters : kDefaultIters;
  const int warmup = warmup_iters(iters);
  const int n = rt.n_pes();
  std::size_t max_bytes = 0;
  for (std::size_t s : sizes) max_bytes = std::max(max_bytes, s);

  Symmetric<std::uint8_t> recv = rt.alloc<std::uint8_t>(max_bytes * static_cast<std::size_t>(n));
  std::memset(recv.get(), 0, recv.size());
  std::vector<std::uint8_t> send(max_bytes, static_cast<std::uint8_t>(rt.pe() + 1));
  const std::string peer_reason = peer::unavailable_reason(rt.pe(), n);
  if (env.report) {
    env.report->note("all_gather: " + std::to_string(n) + " PEs, bytes = per PE, " +
                     std::to_string(iters) + " timed calls after " + std::to_string(warmup) +
                     " warm-up; median per call (PE 0)");
    env.report->note("limit = memcpy of (P - 1) * bytes by one thread, private buffers");
    env.report->note("peer  = MPI_Allgather" +
                     (peer_reason.empty() ? std::string() : " -- " + peer_reason));
  }
  env.idle.arrive_and_wait();

  for (const std::size_t bytes : sizes) {
    // limit: what every PE must receive, copied once
    std::optional<double> limit;
    if (rt.pe() == 0) {
      std::vector<double> times = memcpy_times(
          std::max<std::size_t>(1, bytes * static_cast<std::size_t>(n - 1)), warmup + iters);
      times.erase(times.begin(), times.begin() + warmup);
      limit = median(times);
    }
    env.idle.arrive_and_wait();
    // peer
    peer::PeerTimes peer_times = peer::allgather(rt.pe(), n, bytes, warmup, iters);
    for (const auto algo :
         {ops::AllGatherAlgo::oneshot, ops::AllGatherAlgo::ring, ops::AllGatherAlgo::automatic}) {
      std::vector<double> times;
      SplitTally split;
      for (int i = 0; i < warmup + iters; ++i) {
        rt.barrier();
        split.begin();
        const double t0 = now_us();
        ops::all_gather(rt, env.stream, send.data(), recv.get(), bytes, algo);
        env.stream.synchronize();
        const double t = now_us() - t0;
        if (i >= warmup) {
          times.push_back(t);
          split.end(t);
        }
      }
      Row row;
      row.bench = "all_gather";
      row.variant = algo == ops::AllGatherAlgo::automatic ? "auto" : ops::to_string(algo);
      row.pes = n;
      row.bytes = bytes;
      row.iters = iters;
      row.time_us = median(times);
      row.limit_time_us = limit;
      if (!peer_times.us.empty()) row.peer_time_us = median(peer_times.us);
      row.peer_note = peer_times.unavailable;
      row.extra.push_back(
          {"algo", std::string(ops::to_string(ops::resolve_all_gather_algo(bytes, algo)))});
      split.add_fields(row.extra);
      if (env.report) env.report->add(row);
    }
    env.idle.arrive_and_wait();
  }
}

}  // namespace tessera::bench
