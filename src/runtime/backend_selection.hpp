// Which backend a PE runs on, and what the runtime asks of it. The runtime holds one
// ExecutionBackend, chosen at init: the host backend (backend_selection.cpp), or a GPU backend
// (src/gpu/gpu_backend.cpp, compiled once per GPU runtime; src/gpu/gpu_disabled.cpp where the
// build has none). Internal.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "heap/heap_segment.hpp"
#include "runtime/proxy_ring.hpp"
#include "tessera/runtime.hpp"
#include "tessera/stream.hpp"

namespace tessera::detail {

class ExecutionBackend {
 public:
  virtual ~ExecutionBackend() = default;
  virtual Backend kind() const = 0;
  // True when the heap, tables and rings are ordinary host memory (the host backend).
  virtual bool host_memory() const = 0;
  // Makes this PE's device (node_pe % devices) current on the calling thread and returns it;
  // -1 on the host backend. Throws Error(backend) naming `pe`.
  virtual int select_device(int node_pe, int pe) = 0;
  // This PE's heap, with the node peers' heaps mapped where the backend can (collective).
  virtual std::unique_ptr<HeapSegment> make_heap_segment(const SegmentRequest& request) = 0;
  // The PE's stream: a host executor, or one over a non-blocking GPU stream.
  virtual std::unique_ptr<Stream> make_stream(int pe) = 0;
  // Zeroed memory the host reads and device code writes: ordinary host memory, or pinned host
  // memory mapped into the device.
  virtual ProxyRing make_proxy_ring(std::size_t bytes, int pe) = 0;
  // Device clock_ns() units per true nanosecond (after select_device): 1 except where the
  // device's clock rate differs from the one the platform header assumes (HIP's wall clock:
  // 100 MHz assumed, hipDeviceAttributeWallClockRate asked). Device deadlines are scaled by it.
  virtual double device_clock_scale() const { return 1.0; }
};

// The backend asked for, resolved and made: `automatic` is the GPU backend (cuda, then hip)
// that this build has and that sees a device, else host. Throws Error(backend) with the true
// cause (not built, no driver, driver too old, no device) when the one asked for cannot run.
std::unique_ptr<ExecutionBackend> select_backend(Backend asked);

// tessera-info --gpu: the preflight of every GPU runtime (src/gpu/gpu_checks.hpp's
// format_preflight), then "preflight: no GPU is usable" when none passed. `ok`: one passed.
std::string gpu_preflight_report(bool& ok);

}  // namespace tessera::detail
