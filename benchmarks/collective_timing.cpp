// The collective subcommands' shared timing (collective_timing.hpp).
#include "collective_timing.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "split.hpp"
#include "tessera/stream.hpp"
#include "timing.hpp"

namespace tessera::bench {

double memcpy_median(std::size_t bytes, int warmup, int iters) {
  bytes = std::max<std::size_t>(bytes, 1);
  std::vector<std::uint8_t> src(bytes, 7), dst(bytes, 1);
  std::vector<double> times;
  for (int r = 0; r < warmup + iters; ++r) {
    const double t0 = now_us();
    std::memcpy(dst.data(), src.data(), bytes);
    if (r >= warmup) times.push_back(now_us() - t0);
    src[static_cast<std::size_t>(r) % bytes] = static_cast<std::uint8_t>(r);
  }
  return median(times);
}

Row time_row(BenchEnv& env, const Measured& m, const std::string& variant,
             const std::function<void()>& call) {
  Runtime& rt = env.rt;
  const int warmup = warmup_iters(m.iters);
  std::vector<double> times;
  SplitTally split;
  for (int i = 0; i < warmup + m.iters; ++i) {
    rt.barrier();
    split.begin();
    const double t0 = now_us();
    call();
    env.stream.synchronize();
    const double t = now_us() - t0;
    if (i >= warmup) {
      times.push_back(t);
      split.end(t);
    }
  }
  Row row;
  row.bench = m.bench;
  row.variant = variant;
  row.pes = rt.n_pes();
  row.bytes = m.bytes;
  row.iters = m.iters;
  row.time_us = median(times);
  row.limit_time_us = m.limit;
  if (!m.peer->us.empty()) row.peer_time_us = median(m.peer->us);
  row.peer_note = m.peer->unavailable;
  if (!m.resolved.empty()) row.extra.push_back({"algo", m.resolved});
  split.add_fields(row.extra);
  return row;
}

double measure(BenchEnv& env, const Measured& m, const std::function<void()>& call) {
  const Row ordinary = time_row(env, m, m.variant, call);
  if (env.report) env.report->add(ordinary);
  if (!env.options.graph) return ordinary.time_us;
  // The timed calls above made the first call of this combination, so it can be captured.
  env.stream.begin_capture();
  try {
    call();
  } catch (...) {
    (void)env.stream.end_capture();
    throw;
  }
  Graph graph = env.stream.end_capture();
  Row replay = time_row(env, m, m.variant + "/graph", [&] { graph.launch(env.stream); });
  replay.extra.push_back({"ordinary_us", ordinary.time_us});
  if (replay.time_us > 0) {
    replay.extra.push_back({"replay_speedup", ordinary.time_us / replay.time_us});
  }
  if (env.report) env.report->add(replay);
  return ordinary.time_us;
}

}  // namespace tessera::bench
