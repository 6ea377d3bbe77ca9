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

#include "collective_timing.hpp"
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
      limit = memcpy_median(bytes * static_cast<std::size_t>(n - 1), warmup, iters);
    }
    env.idle.arrive_and_wait();
    // peer
    peer::PeerTimes peer_times = peer::allgather(rt.pe(), n, bytes, warmup, iters);
    for (const auto algo :
         {ops::AllGatherAlgo::oneshot, ops::AllGatherAlgo::ring, ops::AllGatherAlgo::automatic}) {
      measure(env,
              {"all_gather", algo == ops::AllGatherAlgo::automatic ? "auto" : ops::to_string(algo),
               ops::to_string(ops::resolve_all_gather_algo(bytes, algo)), bytes, iters, limit,
               &peer_times},
              [&] { ops::all_gather(rt, env.stream, send.data(), recv.get(), bytes, algo); });
    }
    env.idle.arrive_and_wait();
  }
}

}  // namespace tessera::bench
