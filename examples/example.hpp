// What every example shares: the runtime made from the environment and finalized, the exit
// status, errors printed with the example's name, and the time of one call.
#pragma once

#include <chrono>
#include <cstdio>
#include <exception>

#include "tessera/tessera.hpp"

namespace example {

// Milliseconds of call() run to completion on rt's stream.
template <class Call>
double time_ms(tessera::Runtime& rt, Call&& call) {
  const auto t0 = std::chrono::steady_clock::now();
  call();
  rt.stream().synchronize();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// Runs body(rt) -> bool (verified) on a Runtime made from the environment, finalizes it (what
// body allocated is freed when it returns) and returns the exit status: 0 when body verified its
// result, 1 when not or on an error, which is printed as "<name>: <what>".
template <class Body>
int run(const char* name, Body&& body) {
  try {
    auto rt = tessera::Runtime::init(tessera::Options::from_env());
    const bool ok = body(rt);
    std::fflush(stdout);
    rt.finalize();
    return ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", name, e.what());
    return 1;
  }
}

}  // namespace example
