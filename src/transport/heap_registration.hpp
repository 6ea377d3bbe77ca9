// How the network transport asks libfabric for a heap in a given kind of memory (DESIGN §6,
// issue 7 item 1): host memory is registered with fi_mr_reg; GPU memory needs a provider that
// offers FI_HMEM and is registered with fi_mr_regattr naming its interface and device. A pure
// function of the heap's kind, so the decision is tested without a GPU or a fabric; fabric.cpp
// maps it onto libfabric's constants. Internal.
#pragma once

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

}  // namespace tessera::detail
