// How the network transport asks libfabric for a heap in a given kind of memory (DESIGN §6,
// issue 7 item 1): host memory is registered with fi_mr_reg; GPU memory needs a provider that
// offers FI_HMEM and is registered with fi_mr_regattr naming its interface and device. A pure
// function of the heap's kind, so the decision is tested without a GPU or a fabric; fabric.cpp
// maps it onto libfabric's constants. Internal.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace tessera::detail {

// Where a PE's heap lives.
enum class HeapMemory { host, cuda, rocr };

// What the endpoint setup does for a heap of some HeapMemory.
struct HeapRegistration {
  bool hmem = false;  // ask fi_getinfo for FI_HMEM (a provider without it cannot be used)
  HeapMemory iface = HeapMemory::host;  // fi_mr_regattr's iface: FI_HMEM_SYSTEM / _CUDA / _ROCR
  int device = -1;  // the GPU's ordinal (fi_mr_attr::device.cuda / .rocr); -1 for host
  const char* what = "host memory";  // for messages: "CUDA device memory (device 0)"
};

// The registration of a heap of `memory` on GPU `device` (ignored for host memory).
inline HeapRegistration heap_registration(HeapMemory memory, int device) {
  HeapRegistration r;
  r.iface = memory;
  switch (memory) {
    case HeapMemory::host:
      return r;
    case HeapMemory::cuda:
      r.what = "CUDA device memory";
      break;
    case HeapMemory::rocr:
      r.what = "ROCm device memory";
      break;
  }
  r.hmem = true;
  r.device = device < 0 ? 0 : device;
  return r;
}

// "CUDA device memory (device 1)", "host memory".
inline std::string describe(const HeapRegistration& r) {
  return r.hmem ? std::string(r.what) + " (device " + std::to_string(r.device) + ")"
                : std::string(r.what);
}

// --- the segment as two registered regions (issue 17 item 1) ---
// A PE's segment is its heap, a hole (kGuardBytes), then its control area, at the same offsets on
// every PE. The NIC gets the heap and the control area's peer-written page as two regions, so
// the hole is in no registration: on the host backend it is inaccessible (a registration that
// pins pages could not cover it), and on a GPU the heap and the control area are separate
// allocations, at unrelated addresses on the IPC path. Remote addresses stay segment offsets;
// this says which region, and where in it, an offset falls. Pure: tested in
// local_registration_test.cpp.
struct SegmentRegions {
  std::size_t heap_bytes = 0;      // region 0: [0, heap_bytes)
  std::size_t control_offset = 0;  // region 1: [control_offset, control_offset + control_bytes)
  std::size_t control_bytes = 0;   // 0: region 0 only

  static constexpr int kHeap = 0;
  static constexpr int kControl = 1;

  // The region of segment offset `offset` (descriptors were checked against both regions).
  int region_of(std::uint64_t offset) const {
    return control_bytes != 0 && offset >= control_offset ? kControl : kHeap;
  }
  // `offset` from the start of its region: what a provider without FI_MR_VIRT_ADDR takes.
  std::uint64_t offset_in_region(std::uint64_t offset) const {
    return region_of(offset) == kControl ? offset - control_offset : offset;
  }
  // The region [p, p + bytes) lies in, for a heap at `heap` and a control area at `control` as
  // mapped here: kHeap, kControl, or -1.
  int region_holding(const char* heap, const char* control, const void* p,
                     std::size_t bytes) const {
    auto inside = [&](const char* start, std::size_t length) {
      auto a = reinterpret_cast<std::uintptr_t>(p);
      auto b = reinterpret_cast<std::uintptr_t>(start);
      return start != nullptr && a >= b && bytes <= length && a - b <= length - bytes;
    };
    if (inside(heap, heap_bytes)) return kHeap;
    if (control_bytes != 0 && inside(control, control_bytes)) return kControl;
    return -1;
  }
};

// --- buffers outside the heap (issue 18 item 3) ---
// A put/get names a local buffer the proxy hands to fi_write/fi_read. In the heap it carries the
// heap's descriptor; outside it, the provider's mr_mode decides: FI_MR_LOCAL wants every local
// buffer registered, FI_MR_HMEM wants every device-memory buffer registered (with fi_mr_regattr
// naming FI_HMEM_CUDA/ROCR and the device, never as host memory), and a device buffer needs a
// provider that granted FI_HMEM at all.

// What the endpoint's provider asks for, as fi_getinfo answered.
struct ProviderMrMode {
  bool mr_local = false;  // FI_MR_LOCAL
  bool mr_hmem = false;   // FI_MR_HMEM
  bool hmem = false;      // caps include FI_HMEM
  std::string name;       // "tcp;ofi_rxm", for messages
};

// What the proxy does with one local buffer.
struct LocalRegistration {
  enum Action {
    none,           // pass no descriptor
    heap,           // the heap's descriptor (the buffer lies in the heap)
    register_host,  // fi_mr_reg it as host memory, pass its descriptor
    register_hmem,  // fi_mr_regattr it in `where` (FI_HMEM_CUDA/ROCR, device), pass its descriptor
    refuse,         // the provider cannot move it: fail with `error`
  };
  Action action = none;
  HeapRegistration where;  // register_hmem's interface and device
  std::string error;       // refuse's message
};

// The decision for `bytes` at a local buffer in `memory` on GPU `device` (ignored for host
// memory), `in_heap` when it lies in the registered heap, whose registration is `heap`. Pure:
// tested with made-up provider flags (tests/fabric/local_registration_test.cpp).
inline LocalRegistration local_registration(std::size_t bytes, bool in_heap, HeapMemory memory,
                                            int device, const HeapRegistration& heap,
                                            const ProviderMrMode& provider) {
  LocalRegistration r;
  if (bytes == 0) return r;
  if (in_heap) {
    if (provider.mr_local || (provider.mr_hmem && heap.hmem)) r.action = LocalRegistration::heap;
    return r;
  }
  if (memory == HeapMemory::host) {
    if (provider.mr_local) r.action = LocalRegistration::register_host;
    return r;
  }
  r.where = heap_registration(memory, device);
  if (!provider.hmem) {
    r.action = LocalRegistration::refuse;
    r.error = "a put/get buffer in " + describe(r.where) +
              " outside the heap needs FI_HMEM, which provider " + provider.name +
              " did not grant; use a buffer in the heap or in host memory";
    return r;
  }
  if (provider.mr_local || provider.mr_hmem) r.action = LocalRegistration::register_hmem;
  return r;
}

// Where local buffer `p` lives: GPU memory (and its device in *device) or host memory. Defined
// by the CUDA backend (runtime/cuda_driver.cpp) or, in builds without it, as "host memory"
// (transport/local_memory_host.cpp). Called only for a job whose heap is in GPU memory.
HeapMemory local_buffer_memory(const void* p, int* device);

}  // namespace tessera::detail
