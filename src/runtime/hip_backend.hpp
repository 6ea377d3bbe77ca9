// What the runtime asks of the HIP backend (AMD GPUs through ROCm). Implemented by the HIP
// wrappers (hip_runtime.cpp, heap/hip_segment.cpp) in a HIP-enabled build, and by hip_disabled.cpp
// otherwise, so the runtime has no build-dependent code. The same shape as cuda_backend.hpp.
// Internal.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "heap/heap_segment.hpp"
#include "launch/native_stream.hpp"
#include "runtime/proxy_ring.hpp"

namespace tessera::detail::hip {

struct Probe {
  int devices = 0;       // HIP devices visible to this process
  std::string why_none;  // when devices == 0: why (not built, no driver, no device)
};

// Counts the visible devices; never throws.
Probe probe();

// Makes device node_pe % devices current on the calling thread and returns it. Throws
// Error(backend) naming `pe`.
int select_device(int node_pe, int devices, int pe);

// This PE's heap in fine-grained device memory, with the node peers' heaps mapped where P2P
// allows.
std::unique_ptr<HeapSegment> make_heap_segment(const SegmentRequest& request, int device);

// A non-blocking stream on `device`.
std::unique_ptr<NativeStream> make_stream(int device, int pe);

// Zeroed pinned host memory mapped into `device`'s address space.
ProxyRing make_proxy_ring(std::size_t bytes, int device, int pe);

}  // namespace tessera::detail::hip
