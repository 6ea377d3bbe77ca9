// The collective subcommands' shared timing (collective_timing.hpp).
#include "collective_timing.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "split.hpp"
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

void measure(BenchEnv& env, const Measured& m, const std::function<void()>& call) {
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
  row.variant = m.variant;
  row.pes = rt.n_pes();
  row.bytes = m.bytes;
  row.iters = m.iters;
  row.time_us = median(times);
  row.limit_time_us = m.limit;
  if (!m.peer->us.empty()) row.peer_time_us = median(m.peer->us);
  row.peer_note = m.peer->unavailable;
  if (!m.resolved.empty()) row.extra.push_back({"algo", m.resolved});
  split.add_fields(row.extra);
  if (env.report) env.report->add(row);
}

}  // namespace tessera::bench
