// Elements of any trivially copyable T made from and read as bytes: what the device tests write
// and compare. No gtest, so the GPU test programs (nvcc, hipcc) include it too.
#pragma once

#include <cstdint>
#include <cstring>

namespace tessera::element_bytes {

// An element of T whose bytes encode v (truncated to sizeof(T)).
template <class T>
T element(std::uint64_t v) {
  T out;
  std::memcpy(&out, &v, sizeof(T));
  return out;
}

// The bytes of `a` as a number (zero-extended from sizeof(T)).
template <class T>
std::uint64_t bits_of(const T& a) {
  std::uint64_t v = 0;
  std::memcpy(&v, &a, sizeof(T));
  return v;
}

}  // namespace tessera::element_bytes
