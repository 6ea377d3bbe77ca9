// The CUDA-only path of the GPU heap: cuMem VMM memory exported as a POSIX fd, handed to the
// node's peers over the Unix-socket exchange the host backend uses, imported and mapped there
// with read/write access for the importing device. cuda_vmm_heap.cpp implements it over
// runtime/cuda_driver.hpp; vmm_absent.cpp says "unsupported" for a runtime without it (HIP), so
// gpu_segment.cpp has one exchange for both. Internal.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "bootstrap/fd.hpp"
#include "gpu/gpu_checks.hpp"
#include "tessera/detail/gpu_names.hpp"

namespace tessera::detail::TESSERA_GPU_NS {

class VmmHeap {
 public:
  virtual ~VmmHeap() = default;
  // This PE's segment, mapped read/write for its device: where it starts, and its size as peers
  // compare it (>= the request: the granularity).
  virtual char* base() const = 0;
  virtual std::size_t bytes() const = 0;
  // How the segment is laid out (gpu_checks.hpp): one allocation, or the heap and the control
  // area as two with the hole between them unmapped (issue 17 item 1). Only the mapped ranges
  // may be touched (zeroed, copied).
  virtual const VmmLayout& layout() const = 0;
  // New fds referring to this PE's allocations, one per allocation (1 or 2), for
  // exchange_node_fds.
  virtual std::vector<Fd> export_fds() const = 0;
  // Imports and maps a peer's allocations from the fds it exported (export_fds' order), laid out
  // as this PE's own; returns its base here. The mapping lives until close_peers().
  virtual char* map_peer(const std::vector<int>& fds, int device, int pe, int owner_pe) = 0;
  // Unmaps every peer's memory (before this PE's own goes).
  virtual void close_peers() noexcept = 0;
};

// True when `device` supports VMM allocations exportable as POSIX fds.
bool vmm_heap_supported(int device);
// The granularity VMM allocations on `device` are rounded to (only where vmm_heap_supported).
// Throws Error(backend) naming `pe`.
std::size_t vmm_heap_granularity(int device, int pe);
// 1 when a NIC can register `device`'s VMM memory (GPUDirect RDMA with VMM), 0 when not, -1 for
// a runtime without the VMM path.
int vmm_gpudirect_rdma(int device);
// A segment on `device` laid out as `layout` (vmm_layout with this device's granularity),
// allocated and mapped. Throws Error(out_of_memory / backend) naming `pe`.
std::unique_ptr<VmmHeap> make_vmm_heap(const VmmLayout& layout, int device, int pe);

}  // namespace tessera::detail::TESSERA_GPU_NS
