// What the fused GEMM examples (ag_gemm, gemm_rs, gemm_ar) share: the command line [M N K], the
// runtime, the timing of one call, the check against a double-precision reference and the exit
// status. Each example adds its operands, its reference and its line of output.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <vector>

#include "tessera/tessera.hpp"

namespace example {

// C's shape as the example's command line gives it: argv[1..3], each defaulting to its own.
struct Shape {
  std::size_t m, n, k;
};

// A deterministic operand: element (row, col) of PE pe's copy is a value in [-0.5, 0.5) that
// every PE can regenerate (pe_step 0: the same on every PE).
struct Operand {
  std::size_t row_step, col_step, pe_step, period;
  float operator()(int pe, std::size_t row, std::size_t col) const {
    const std::size_t v =
        (row * row_step + col * col_step + static_cast<std::size_t>(pe) * pe_step) % period;
    return static_cast<float>(v) / static_cast<float>(period) - 0.5f;
  }
};

// The largest |c - want| over the largest |want| (the error itself when want is all zero).
inline double relative_error(const std::vector<double>& want, const float* c) {
  double diff = 0, scale = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    diff = std::max(diff, std::abs(static_cast<double>(c[i]) - want[i]));
    scale = std::max(scale, std::abs(want[i]));
  }
  return scale == 0 ? diff : diff / scale;
}

// The fp32 bound every example's result must meet.
inline constexpr double kTolerance = 1e-5;

// Milliseconds of call() run to completion on rt's stream.
template <class Call>
double time_ms(tessera::Runtime& rt, Call&& call) {
  const auto t0 = std::chrono::steady_clock::now();
  call();
  rt.stream().synchronize();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// Runs body(rt, shape) -> bool (verified) on a Runtime made from the environment, finalizes it and
// returns the exit status: 0 when body verified its result, 1 when not or on an error, which is
// printed as "<name>: <what>".
template <class Body>
int run(const char* name, int argc, char** argv, Shape defaults, Body&& body) {
  try {
    auto rt = tessera::Runtime::init(tessera::Options::from_env());
    Shape shape = defaults;
    std::size_t* dims[] = {&shape.m, &shape.n, &shape.k};
    for (int i = 1; i < argc && i <= 3; ++i) *dims[i - 1] = std::strtoul(argv[i], nullptr, 10);
    const bool ok = body(rt, shape);
    std::fflush(stdout);
    rt.finalize();
    return ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", name, e.what());
    return 1;
  }
}

}  // namespace example
