// The double-precision reference the collectives' tests share: exact small-integer data for
// every dtype, element access through a Dtype, and the reductions. Values stay small enough that
// every dtype holds each one and every reduction of up to 5 of them exactly.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "tessera/device/numeric.hpp"
#include "tessera/ops/all_reduce.hpp"

namespace tessera::ops_reference {

using ops::Dtype;
using ops::ReduceOp;

// Element i of world PE `pe`'s data for call `call` of a test seeded `seed`: for prod one of
// +-1, +-2 (products of 5 stay within +-32), for sum -4..4, for max/min -spread..spread.
inline double value(std::uint64_t seed, int pe, std::uint64_t call, std::size_t i, ReduceOp op,
                    int spread) {
  const std::uint64_t h =
      (seed * 1000003u + static_cast<std::uint64_t>(pe) * 7919u + call * 131u + i * 2654435761u) >>
      7;
  if (op == ReduceOp::prod) {
    static const double kFactors[] = {1, -1, 2, -2, 1, -1};
    return kFactors[h % 6];
  }
  if (op == ReduceOp::sum) return static_cast<double>(h % 9) - 4;
  const auto width = static_cast<std::uint64_t>(2 * spread + 1);
  return static_cast<double>(h % width) - spread;
}

// Stores v as element i of a dtype array.
inline void store(Dtype dtype, void* buf, std::size_t i, double v) {
  namespace td = tessera::device;
  switch (dtype) {
    case Dtype::f32:
      static_cast<float*>(buf)[i] = static_cast<float>(v);
      break;
    case Dtype::bf16:
      static_cast<td::bf16*>(buf)[i] = td::to_bf16(static_cast<float>(v));
      break;
    case Dtype::f16:
      static_cast<td::half*>(buf)[i] = td::to_half(static_cast<float>(v));
      break;
    case Dtype::i32:
      static_cast<std::int32_t*>(buf)[i] = static_cast<std::int32_t>(v);
      break;
    case Dtype::i64:
      static_cast<std::int64_t*>(buf)[i] = static_cast<std::int64_t>(v);
      break;
  }
}

// Element i of a dtype array, widened to double.
inline double load(Dtype dtype, const void* buf, std::size_t i) {
  namespace td = tessera::device;
  switch (dtype) {
    case Dtype::f32:
      return static_cast<const float*>(buf)[i];
    case Dtype::bf16:
      return td::to_float(static_cast<const td::bf16*>(buf)[i]);
    case Dtype::f16:
      return td::to_float(static_cast<const td::half*>(buf)[i]);
    case Dtype::i32:
      return static_cast<const std::int32_t*>(buf)[i];
    case Dtype::i64:
      return static_cast<double>(static_cast<const std::int64_t*>(buf)[i]);
  }
  return NAN;
}

// op applied to a and b.
inline double reduce(ReduceOp op, double a, double b) {
  switch (op) {
    case ReduceOp::sum:
      return a + b;
    case ReduceOp::max:
      return a < b ? b : a;
    case ReduceOp::min:
      return b < a ? b : a;
    case ReduceOp::prod:
      return a * b;
  }
  return NAN;
}

}  // namespace tessera::ops_reference
