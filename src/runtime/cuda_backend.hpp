// What the runtime asks of the CUDA backend. Implemented by the CUDA wrappers (cuda_runtime.cpp,
// heap/cuda_segment.cpp) in a CUDA-enabled build, and by cuda_disabled.cpp otherwise, so the
// runtime has no build-dependent code. Internal.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "heap/heap_segment.hpp"
#include "launch/native_stream.hpp"
#include "runtime/proxy_ring.hpp"

namespace tessera::detail::cuda {

struct Probe {
  int devices = 0;       // CUDA devices visible to this process
  std::string why_none;  // when devices == 0: why (not built, no driver, no device)
};

// Counts the visible devices; never throws.
Probe probe();

// Makes device node_pe % devices current on the calling thread and returns it. Throws
// Error(backend) naming `pe`.
int select_device(int node_pe, int devices, int pe);

// This PE's heap in device memory, with the node peers' heaps mapped where P2P allows.
std::unique_ptr<HeapSegment> make_heap_segment(const SegmentRequest& request, int device);

// A non-blocking stream on `device`.
std::unique_ptr<NativeStream> make_stream(int device, int pe);

// Zeroed pinned host memory mapped into `device`'s address space.
ProxyRing make_proxy_ring(std::size_t bytes, int device, int pe);

}  // namespace tessera::detail::cuda
