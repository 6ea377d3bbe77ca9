#include "fill.hpp"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>

namespace tessera::python {

namespace {

template <class T>
void fill_as(void* data, std::size_t count, T value) {
  std::fill_n(static_cast<T*>(data), count, value);
}

// bfloat16 is the top half of a float32, rounded to nearest even.
std::uint16_t to_bf16(float f) {
  auto bits = std::bit_cast<std::uint32_t>(f);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((bits >> 16) | 0x40);
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<std::uint16_t>(bits >> 16);
}

}  // namespace

void fill(void* data, std::size_t count, const Dtype& dtype, double value, std::int64_t exact) {
  using Code = nb::dlpack::dtype_code;
  const auto code = static_cast<Code>(dtype.dl.code);
  const int bits = dtype.dl.bits;
  if (code == Code::Bfloat) return fill_as(data, count, to_bf16(static_cast<float>(value)));
  if (code == Code::Float) {
    if (bits == 16) return fill_as(data, count, static_cast<_Float16>(value));
    if (bits == 32) return fill_as(data, count, static_cast<float>(value));
    return fill_as(data, count, value);
  }
  if (code == Code::Int) {
    if (bits == 8) return fill_as(data, count, static_cast<std::int8_t>(exact));
    if (bits == 16) return fill_as(data, count, static_cast<std::int16_t>(exact));
    if (bits == 32) return fill_as(data, count, static_cast<std::int32_t>(exact));
    return fill_as(data, count, static_cast<std::int64_t>(exact));
  }
  if (bits == 8) return fill_as(data, count, static_cast<std::uint8_t>(exact));
  if (bits == 16) return fill_as(data, count, static_cast<std::uint16_t>(exact));
  if (bits == 32) return fill_as(data, count, static_cast<std::uint32_t>(exact));
  fill_as(data, count, static_cast<std::uint64_t>(exact));
}

}  // namespace tessera::python
