// 16-bit floating-point element types and their conversions to and from fp32. Tessera moves
// half and bf16 as bits (puts, gets and signals never convert); the fused ops widen them to fp32
// to compute and narrow results back with these functions, the same on every backend.
#pragma once

#include <cstdint>
#include <cstring>

#include "tessera/device/platform/macros.hpp"

namespace tessera::device {

// 2-byte storage types for fp16 and bf16 data.
struct half {
  std::uint16_t bits;
};
struct bf16 {
  std::uint16_t bits;
};

// The fp32 value of a bf16 (its bits are the high half of a float's).
TESSERA_HOST_DEVICE inline float to_float(bf16 v) {
  std::uint32_t bits = static_cast<std::uint32_t>(v.bits) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}
TESSERA_HOST_DEVICE inline float to_float(float v) { return v; }

// The fp32 value of an IEEE fp16 (exact: every half is a float).
TESSERA_HOST_DEVICE inline float to_float(half v) {
  const std::uint32_t sign = static_cast<std::uint32_t>(v.bits & 0x8000u) << 16;
  const std::uint32_t exp = (v.bits >> 10) & 0x1fu;
  std::uint32_t mant = v.bits & 0x3ffu;
  std::uint32_t bits = sign;
  if (exp == 0x1fu) {
    bits |= 0x7f800000u | (mant << 13);  // inf, NaN
  } else if (exp != 0) {
    bits |= ((exp + 112u) << 23) | (mant << 13);
  } else if (mant != 0) {  // subnormal: normalise
    std::uint32_t shifts = 0;
    while ((mant & 0x400u) == 0) {
      mant <<= 1;
      ++shifts;
    }
    bits |= ((113u - shifts) << 23) | ((mant & 0x3ffu) << 13);
  }
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

// The bf16 nearest to `f` (round to nearest even; NaN stays NaN).
TESSERA_HOST_DEVICE inline bf16 to_bf16(float f) {
  std::uint32_t bits;
  std::memcpy(&bits, &f, sizeof(bits));
  if ((bits & 0x7f800000u) == 0x7f800000u && (bits & 0x007fffffu) != 0) {
    return bf16{static_cast<std::uint16_t>((bits >> 16) | 0x40u)};
  }
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return bf16{static_cast<std::uint16_t>(bits >> 16)};
}

// The half nearest to `f` (round to nearest even; overflow gives inf, NaN stays NaN).
TESSERA_HOST_DEVICE inline half to_half(float f) {
  std::uint32_t bits;
  std::memcpy(&bits, &f, sizeof(bits));
  const auto sign = static_cast<std::uint16_t>((bits >> 16) & 0x8000u);
  const std::uint32_t mag = bits & 0x7fffffffu;
  if (mag >= 0x7f800000u) {  // inf, NaN (kept quiet)
    return half{static_cast<std::uint16_t>(sign | 0x7c00u | (mag > 0x7f800000u ? 0x200u : 0u))};
  }
  if (mag >= 0x477ff000u) return half{static_cast<std::uint16_t>(sign | 0x7c00u)};  // >= 65520
  if (mag < 0x38800000u) {  // below 2^-14: a subnormal half (or zero), in units of 2^-24
    if (mag <= 0x33000000u) return half{sign};  // at most 2^-25: rounds (to even) to zero
    const std::uint32_t mant = (mag & 0x7fffffu) | 0x800000u;
    const std::uint32_t shift = 126u - (mag >> 23);
    std::uint32_t h = mant >> shift;
    const std::uint32_t rest = mant & ((1u << shift) - 1u), tie = 1u << (shift - 1u);
    if (rest > tie || (rest == tie && (h & 1u) != 0)) ++h;
    return half{static_cast<std::uint16_t>(sign | h)};
  }
  std::uint32_t h = (mag - (112u << 23)) >> 13;  // rebias the exponent, keep 10 mantissa bits
  const std::uint32_t rest = mag & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u) != 0)) ++h;  // a carry bumps the exponent
  return half{static_cast<std::uint16_t>(sign | h)};
}

}  // namespace tessera::device
