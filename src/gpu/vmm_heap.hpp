// The CUDA-only path of the GPU heap: cuMem VMM memory exported as a POSIX fd, handed to the
// node's peers over the Unix-socket exchange the host backend uses, imported and mapped there
// with read/write access for the importing device. cuda_vmm_heap.cpp implements it over
// runtime/cuda_driver.hpp; vmm_absent.cpp says "unsupported" for a runtime without it (HIP), so
// gpu_segment.cpp has one exchange for both. Internal.
#pragma once

#include <cstddef>
#include <memory>

#include "bootstrap/fd.hpp"
#include "tessera/detail/gpu_names.hpp"

namespace tessera::detail::TESSERA_GPU_NS {

class VmmHeap {
 public:
  virtual ~VmmHeap() = default;
  // This PE's memory, mapped read/write for its device, `bytes()` >= the request (granularity).
  virtual char* base() const = 0;
  virtual std::size_t bytes() const = 0;
  // A new fd referring to this PE's allocation, for exchange_node_fds.
  virtual Fd export_fd() const = 0;
  // Imports and maps a peer's allocation from the fd it exported; returns its base here. The
  // mapping lives until close_peers().
  virtual char* map_peer(int fd, std::size_t bytes, int device, int pe, int owner_pe) = 0;
  // Unmaps every peer's memory (before this PE's own goes).
  virtual void close_peers() noexcept = 0;
};

// True when `device` supports VMM allocations exportable as POSIX fds.
bool vmm_heap_supported(int device);
// 1 when a NIC can register `device`'s VMM memory (GPUDirect RDMA with VMM), 0 when not, -1 for
// a runtime without the VMM path.
int vmm_gpudirect_rdma(int device);
// `bytes` rounded up to the VMM granularity, allocated on `device` and mapped. Throws
// Error(out_of_memory / backend) naming `pe`.
std::unique_ptr<VmmHeap> make_vmm_heap(std::size_t bytes, int device, int pe);

}  // namespace tessera::detail::TESSERA_GPU_NS
