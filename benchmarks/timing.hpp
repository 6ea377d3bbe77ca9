// Timing helpers shared by the subcommands: one clock (the platform's, so kernels and host code
// read the same one) and the warm-up rule.
#pragma once

#include <algorithm>

#include "tessera/device/platform.hpp"

namespace tessera::bench {

// Monotonic microseconds (the GPU's global timer in device code).
TESSERA_HOST_DEVICE inline double now_us() {
  return static_cast<double>(device::platform::clock_ns()) / 1e3;
}

// Untimed iterations before the timed ones: enough to fault pages in and warm caches and TLBs.
inline int warmup_iters(int iters) { return std::max(2, iters / 10); }

}  // namespace tessera::bench
