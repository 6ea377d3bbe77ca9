// tessera-bench reduce_scatter | all_to_all | broadcast: the team collectives over the world team,
// f32, each algorithm as its own variant and automatic. `bytes` is what each PE contributes: its
// send buffer (reduce_scatter, all_to_all: P blocks of bytes / P) or the root's message
// (broadcast), 4 B ... 64 MiB. Each sample is one call on PE 0 (enqueue + stream synchronize),
// every PE having left a barrier just before it; the median is reported.
//   limit: memcpy by one thread of PE 0, between private warmed-up buffers while the other PEs
//          idle, of the bytes that must cross into a PE. The model: a reduce-scatter must bring
//          every other PE's copy of this PE's block in ((P - 1) / P * bytes; the arithmetic is
//          free), an all-to-all every other PE's block for this PE ((P - 1) / P * bytes), a
//          broadcast the whole message into every non-root (bytes); a copy of those bytes is the
//          fastest they can move.
//   peer:  MPI_Reduce_scatter_block (MPI_FLOAT, MPI_SUM), MPI_Alltoall, MPI_Bcast (root 0) of the
//          same bytes, timed the same way.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "collective_timing.hpp"
#include "mpi_peer.hpp"
#include "registry.hpp"
#include "split.hpp"
#include "tessera/ops/all_to_all.hpp"
#include "tessera/ops/broadcast.hpp"
#include "tessera/ops/reduce_scatter.hpp"
#include "timing.hpp"

namespace tessera::bench {
namespace {

constexpr int kDefaultIters = 50;

std::vector<std::size_t> sizes_of(const BenchEnv& env) {
  std::vector<std::size_t> sizes = env.options.sizes;
  if (sizes.empty()) {
    for (std::size_t s = 4; s <= (std::size_t{64} << 20); s *= 8) sizes.push_back(s);
  }
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  return sizes;  // 4 B, 32 B, ... 8 MiB, 64 MiB per PE
}

// Fewer samples for large messages, so a run stays within minutes (at least 5).
int iters_for(const BenchEnv& env, std::size_t bytes) {
  const int iters = env.options.iters > 0 ? env.options.iters : kDefaultIters;
  if (env.options.iters > 0) return iters;
  const std::size_t budget = std::size_t{512} << 20;  // bytes moved per variant, roughly
  return static_cast<int>(std::clamp<std::size_t>(budget / std::max<std::size_t>(bytes, 1), 5,
                                                  static_cast<std::size_t>(iters)));
}

void notes(BenchEnv& env, const std::string& what, const std::string& limit,
           const std::string& peer_name) {
  if (!env.report) return;
  const std::string reason = peer::unavailable_reason(env.rt.pe(), env.rt.n_pes());
  env.report->note(what + ": " + std::to_string(env.rt.n_pes()) +
                   " PEs, world team, f32, bytes = per PE; up to " +
                   std::to_string(env.options.iters > 0 ? env.options.iters : kDefaultIters) +
                   " timed calls (fewer above 8 MiB) after a tenth as many warm-up; median per "
                   "call (PE 0)");
  env.report->note("limit = " + limit + " by one thread, private buffers");
  env.report->note("peer  = " + peer_name + (reason.empty() ? std::string() : " -- " + reason));
}

}  // namespace

void run_reduce_scatter(BenchEnv& env) {
  Runtime& rt = env.rt;
  const int n = rt.n_pes();
  const auto nz = static_cast<std::size_t>(n);
  const std::vector<std::size_t> sizes = sizes_of(env);
  std::size_t max_count = 1;
  for (std::size_t s : sizes) max_count = std::max(max_count, s / sizeof(float) / nz);
  const Team world = team_world(rt);
  Symmetric<float> recv = rt.alloc<float>(max_count);
  std::vector<float> send(max_count * nz, static_cast<float>(rt.pe() + 1));
  notes(env, "reduce_scatter, sum",
        "memcpy of (P - 1) / P * bytes (every other PE's copy of this PE's block)",
        "MPI_Reduce_scatter_block");
  env.idle.arrive_and_wait();
  for (const std::size_t bytes : sizes) {
    const std::size_t count = std::max<std::size_t>(1, bytes / sizeof(float) / nz);
    Measured m;
    m.bench = "reduce_scatter";
    m.bytes = count * nz * sizeof(float);
    m.iters = iters_for(env, m.bytes);
    if (rt.pe() == 0) {
      m.limit = memcpy_median((nz - 1) * count * sizeof(float), warmup_iters(m.iters), m.iters);
    }
    env.idle.arrive_and_wait();
    const peer::PeerTimes peer_times =
        peer::reduce_scatter_block(rt.pe(), n, count, warmup_iters(m.iters), m.iters);
    m.peer = &peer_times;
    for (const auto algo : {ops::ReduceScatterAlgo::one_shot, ops::ReduceScatterAlgo::ring,
                            ops::ReduceScatterAlgo::automatic}) {
      m.variant = algo == ops::ReduceScatterAlgo::automatic ? "auto" : ops::to_string(algo);
      m.resolved =
          ops::to_string(ops::resolve_reduce_scatter_algo(count, ops::Dtype::f32, n, algo));
      measure(env, m, [&] {
        ops::reduce_scatter(rt, env.stream, world, send.data(), recv.get(), count, ops::Dtype::f32,
                            ops::ReduceOp::sum, algo);
      });
    }
    env.idle.arrive_and_wait();
  }
}

void run_all_to_all(BenchEnv& env) {
  Runtime& rt = env.rt;
  const int n = rt.n_pes();
  const auto nz = static_cast<std::size_t>(n);
  const std::vector<std::size_t> sizes = sizes_of(env);
  std::size_t max_count = 1;
  for (std::size_t s : sizes) max_count = std::max(max_count, s / sizeof(float) / nz);
  const Team world = team_world(rt);
  Symmetric<float> recv = rt.alloc<float>(max_count * nz);
  std::vector<float> send(max_count * nz, static_cast<float>(rt.pe() + 1));
  notes(env, "all_to_all", "memcpy of (P - 1) / P * bytes (every other PE's block for this PE)",
        "MPI_Alltoall");
  env.idle.arrive_and_wait();
  for (const std::size_t bytes : sizes) {
    const std::size_t count = std::max<std::size_t>(1, bytes / sizeof(float) / nz);
    Measured m;
    m.bench = "all_to_all";
    m.bytes = count * nz * sizeof(float);
    m.iters = iters_for(env, m.bytes);
    if (rt.pe() == 0) {
      m.limit = memcpy_median((nz - 1) * count * sizeof(float), warmup_iters(m.iters), m.iters);
    }
    env.idle.arrive_and_wait();
    const peer::PeerTimes peer_times =
        peer::alltoall(rt.pe(), n, count * sizeof(float), warmup_iters(m.iters), m.iters);
    m.peer = &peer_times;
    // One algorithm (push); in place stages what it overwrites: both are variants, "auto" is the
    // out-of-place call users make by default.
    m.variant = "push";
    measure(env, m, [&] {
      ops::all_to_all(rt, env.stream, world, send.data(), recv.get(), count, ops::Dtype::f32);
    });
    m.variant = "in_place";
    measure(env, m, [&] {
      ops::all_to_all(rt, env.stream, world, recv.get(), recv.get(), count, ops::Dtype::f32);
    });
    m.variant = "auto";
    m.resolved = "push";
    measure(env, m, [&] {
      ops::all_to_all(rt, env.stream, world, send.data(), recv.get(), count, ops::Dtype::f32);
    });
    env.idle.arrive_and_wait();
  }
}

void run_broadcast(BenchEnv& env) {
  Runtime& rt = env.rt;
  const int n = rt.n_pes();
  const std::vector<std::size_t> sizes = sizes_of(env);
  std::size_t max_count = 1;
  for (std::size_t s : sizes) max_count = std::max(max_count, s / sizeof(float));
  const Team world = team_world(rt);
  Symmetric<float> recv = rt.alloc<float>(max_count);
  Symmetric<float> heap_send = rt.alloc<float>(max_count);
  std::vector<float> send(max_count, static_cast<float>(rt.pe() + 1));
  std::fill(heap_send.get(), heap_send.get() + max_count, static_cast<float>(rt.pe() + 1));
  notes(env, "broadcast, root 0", "memcpy of bytes (the whole message into each non-root)",
        "MPI_Bcast");
  env.idle.arrive_and_wait();
  for (const std::size_t bytes : sizes) {
    const std::size_t count = std::max<std::size_t>(1, bytes / sizeof(float));
    Measured m;
    m.bench = "broadcast";
    m.bytes = count * sizeof(float);
    m.iters = iters_for(env, m.bytes);
    if (rt.pe() == 0) m.limit = memcpy_median(m.bytes, warmup_iters(m.iters), m.iters);
    env.idle.arrive_and_wait();
    const peer::PeerTimes peer_times =
        peer::bcast(rt.pe(), n, m.bytes, warmup_iters(m.iters), m.iters);
    m.peer = &peer_times;
    // Members copy the root's send where it lies when it is in the heap (heap_send, in_place);
    // a private send goes through the root's recv in chunks (private_send).
    m.variant = "heap_send";
    measure(env, m, [&] {
      ops::broadcast(rt, env.stream, world, heap_send.get(), recv.get(), count, ops::Dtype::f32, 0);
    });
    m.variant = "private_send";
    measure(env, m, [&] {
      ops::broadcast(rt, env.stream, world, send.data(), recv.get(), count, ops::Dtype::f32, 0);
    });
    m.variant = "in_place";
    measure(env, m, [&] {
      ops::broadcast(rt, env.stream, world, recv.get(), recv.get(), count, ops::Dtype::f32, 0);
    });
    // auto: the call as users write it by default, from a private send.
    m.variant = "auto";
    m.resolved = "private_send";
    measure(env, m, [&] {
      ops::broadcast(rt, env.stream, world, send.data(), recv.get(), count, ops::Dtype::f32, 0);
    });
    env.idle.arrive_and_wait();
  }
}

}  // namespace tessera::bench
