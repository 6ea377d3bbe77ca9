// What the fused GEMM examples (ag_gemm, gemm_rs, gemm_ar) share beyond example.hpp: the command
// line [M N K], their operands and the check against a double-precision reference. Each example
// adds its operands, its reference and its line of output.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <vector>

#include "example.hpp"
#include "tessera/ops/gemm_dtype.hpp"
#include "tessera/tessera.hpp"

namespace example {

// C's shape as the example's command line gives it: argv[1..3], each defaulting to its own.
struct Shape {
  std::size_t m, n, k;
  // The rows of M each of n_pes PEs holds (ag_gemm's A, gemm_rs's C).
  std::size_t m_per_pe(int n_pes) const { return m / static_cast<std::size_t>(n_pes); }
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
  // PE pe's rows [row0, row0 + rows) x cols, row-major.
  std::vector<float> rows_of(int pe, std::size_t row0, std::size_t rows, std::size_t cols) const {
    std::vector<float> v(rows * cols);
    for (std::size_t i = 0; i < rows; ++i)
      for (std::size_t j = 0; j < cols; ++j) v[i * cols + j] = (*this)(pe, row0 + i, j);
    return v;
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

// example::run with body(rt, shape): the shape from argv[1..3], each defaulting to its own.
template <class Body>
int run(const char* name, int argc, char** argv, Shape defaults, Body&& body) {
  return run(name, [&](tessera::Runtime& rt) {
    Shape shape = defaults;
    std::size_t* dims[] = {&shape.m, &shape.n, &shape.k};
    for (int i = 1; i < argc && i <= 3; ++i) *dims[i - 1] = std::strtoul(argv[i], nullptr, 10);
    return body(rt, shape);
  });
}

// example::run with body(rt, op, shape) -> bool, op an Op (AgGemm, GemmRs, ...) made for the
// command line's shape with fp32 inputs (its constructor's errors, e.g. an M the PEs do not
// divide, are the example's).
template <class Op, class Body>
int run_op(const char* name, int argc, char** argv, Shape defaults, Body&& body) {
  return run(name, argc, argv, defaults, [&](tessera::Runtime& rt, Shape shape) {
    Op op(rt, shape.m, shape.n, shape.k, tessera::ops::GemmDtype::f32);
    return body(rt, op, shape);
  });
}

// One warm-up call, then the milliseconds of one more.
template <class Call>
double warm_time_ms(tessera::Runtime& rt, Call&& call) {
  time_ms(rt, call);
  return time_ms(rt, call);
}

}  // namespace example
