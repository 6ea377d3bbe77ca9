// The capture-and-replay harness of the graph tests: one call of an op captured into a Graph,
// then the graph replayed many times, the inputs rewritten before each replay and every result
// checked after it, on the host backend (threads or processes). Header-only, for the gtest
// programs and the process programs alike: a wrong replay throws ReplayFailure.
#pragma once

#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <thread>

#include "tessera/tessera.hpp"

namespace tessera::graphs_test {

struct ReplayFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct ReplayOptions {
  int replays = 1000;
  // PE `delayed_pe` waits `delay` before each replay it launches (the others run ahead into the
  // op's waits); -1: no PE is delayed.
  int delayed_pe = -1;
  std::chrono::microseconds delay{0};
  // The number of calls made before the capture (an op's first call may do host work that
  // refuses capture, e.g. its agreement check).
  int warmup_calls = 1;
};

// Replays `call` (which enqueues the op on the stream it is given): `write(r)` rewrites the
// inputs of replay r (r = 0 for the warm-up calls too), then the call runs as warm-up, the
// capture records it once, and the graph replays opts.replays times, each followed by
// synchronize() and `check(r)`, which returns "" when replay r's results are right and what is
// wrong otherwise. Throws ReplayFailure naming the PE and the replay at the first wrong result.
// Returns the graph's size (work items).
template <class Call, class Write, class Check>
std::size_t capture_and_replay(Runtime& rt, Call&& call, Write&& write, Check&& check,
                               const ReplayOptions& opts = {}) {
  Stream& stream = rt.stream();
  const auto fail = [&](const std::string& when, const std::string& what) {
    throw ReplayFailure("PE " + std::to_string(rt.pe()) + ", " + when + ": " + what);
  };
  for (int w = 0; w < opts.warmup_calls; ++w) {
    write(0);
    call(stream);
    stream.synchronize();
    if (std::string wrong = check(0); !wrong.empty()) fail("warm-up call", wrong);
  }
  stream.begin_capture();
  try {
    call(stream);
  } catch (...) {
    (void)stream.end_capture();
    throw;
  }
  Graph graph = stream.end_capture();
  for (int r = 1; r <= opts.replays; ++r) {
    write(r);
    // The delay is the condition under test (one PE late into the op's waits), not a wait for
    // something: nothing here depends on what happens during it.
    if (rt.pe() == opts.delayed_pe) std::this_thread::sleep_for(opts.delay);
    graph.launch(stream);
    stream.synchronize();
    if (std::string wrong = check(r); !wrong.empty()) {
      fail("replay " + std::to_string(r) + " of " + std::to_string(opts.replays), wrong);
    }
  }
  return graph.size();
}

// An integer in [-8, 8] for element i of PE `pe`'s input to replay `r`: sums of a few of them
// are exact in every dtype.
inline int value(int pe, int r, std::size_t i) {
  const std::uint64_t h = static_cast<std::uint64_t>(pe) * 7919u +
                          static_cast<std::uint64_t>(r) * 104729u + i * 2654435761u;
  return static_cast<int>((h >> 7) & 15) - 8;
}

}  // namespace tessera::graphs_test
