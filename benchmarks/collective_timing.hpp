// The timing the collective subcommands of tessera-bench share (all_gather, all_reduce,
// reduce_scatter, all_to_all, broadcast): the memcpy limit and one variant's samples into a row.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>

#include "mpi_peer.hpp"
#include "registry.hpp"
#include "report.hpp"

namespace tessera::bench {

// The median of `iters` memcpys of `bytes` (at least 1) between private warmed-up buffers by
// this thread, after `warmup` untimed ones: the limit of a collective that must move those bytes.
double memcpy_median(std::size_t bytes, int warmup, int iters);

// One variant of one size.
struct Measured {
  std::string bench, variant;
  std::string resolved;  // the algorithm automatic resolved to (the `algo` field), or empty
  std::size_t bytes = 0;
  int iters = 0;
  std::optional<double> limit;
  const peer::PeerTimes* peer = nullptr;
};

// Times `call` (collective: every PE runs it) warmup_iters(m.iters) + m.iters times: each sample
// is one call on PE 0 (enqueue + stream synchronize), every PE having left a barrier just before
// it; then reports the row with the median, the limit and the peer side by side. With --graph,
// the call is then captured once on env.stream and the replay (Graph::launch + synchronize) is
// timed the same way, as a second row: variant "<variant>/graph", with `ordinary_us` (the first
// row's median) and `replay_speedup` (ordinary / replay). Returns the ordinary median.
double measure(BenchEnv& env, const Measured& m, const std::function<void()>& call);

// One timed loop of measure(): each sample one `call` on PE 0 after a barrier of every PE, then
// env.stream.synchronize(); the row of its median named `variant`, not reported yet.
Row time_row(BenchEnv& env, const Measured& m, const std::string& variant,
             const std::function<void()>& call);

}  // namespace tessera::bench
