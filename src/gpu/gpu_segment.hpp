// A GPU backend's heap segment (gpu_segment.cpp), compiled once per GPU runtime. Internal.
#pragma once

#include <memory>

#include "heap/heap_segment.hpp"
#include "tessera/detail/gpu_names.hpp"

namespace tessera::detail::TESSERA_GPU_NS {

// This PE's heap in device memory on `device`, with the node peers' heaps mapped where P2P with
// native atomics allows. Collective over request.bootstrap. Throws Error(backend) for PEs that
// are threads of one process on one GPU.
std::unique_ptr<HeapSegment> make_heap_segment(const SegmentRequest& request, int device);

}  // namespace tessera::detail::TESSERA_GPU_NS
