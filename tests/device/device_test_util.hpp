// Helpers shared by the device-API tests.
#pragma once

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <string>

#include "harness/expect_error.hpp"
#include "harness/run_pes.hpp"
#include "tessera/device.hpp"
#include "tessera/launch.hpp"
#include "tessera/stream.hpp"
#include "tessera/stream_rma.hpp"

namespace tessera::device_test {

namespace td = tessera::device;

using harness::expect_error;

// The group of type G inside a host block.
template <class G>
G group_in(td::Block blk) {
  if constexpr (std::is_same_v<G, td::Block>) {
    return blk;
  } else {
    return G{};
  }
}

// Runs fn(G) as a one-block kernel on the PE's default stream and waits for it.
template <class G, class Fn>
void run_kernel(Runtime& rt, Fn fn) {
  launch(rt.stream(), 1, [fn](td::Block blk) { fn(group_in<G>(blk)); });
  rt.stream().synchronize();
}

// An element of T whose bytes encode v (truncated to sizeof(T)).
template <class T>
T element(std::uint64_t v) {
  T out;
  std::memcpy(&out, &v, sizeof(T));
  return out;
}

template <class T>
bool same_bytes(const T& a, const T& b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

template <class T>
std::uint64_t bits_of(const T& a) {
  std::uint64_t v = 0;
  std::memcpy(&v, &a, sizeof(T));
  return v;
}

}  // namespace tessera::device_test
