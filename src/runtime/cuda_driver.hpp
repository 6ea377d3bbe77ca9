// The CUDA driver API's virtual-memory calls (cuMem*), behind RAII handles. The only code that
// touches the driver API: cuda_driver.cpp resolves every entry point at run time through
// cudaGetDriverEntryPointByVersion, so nothing links libcuda and CUDA-enabled binaries load on
// machines without a driver. Internal; built only with TESSERA_HAVE_CUDA.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <utility>
#include <vector>

#include "bootstrap/fd.hpp"

namespace tessera::detail::cuda {

// True when `device` supports cuMemCreate with POSIX file-descriptor handles (the VMM path of
// the heap); false when either is missing or the driver cannot be reached.
bool vmm_supported(int device);

// Issue 18 item 3: true when `device` accepts cuMemCreate's gpuDirectRDMACapable flag
// (CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED); the heap then asks for it.
bool vmm_rdma_supported(int device);

// The granularity, in bytes, that VMM allocations of device memory on `device` are rounded to.
// Throws Error(backend) naming `pe`.
std::size_t vmm_granularity(int device, int pe);

// Physical device memory from cuMemCreate, exportable as a POSIX fd; released on destruction
// (the memory itself lives on while any process still maps it).
class VmmAllocation {
 public:
  VmmAllocation() = default;
  // `bytes` is a multiple of vmm_granularity(device). Throws Error(out_of_memory / backend).
  static VmmAllocation create(std::size_t bytes, int device, int pe);
  // Imports a peer's allocation from the fd it exported. Throws Error(backend).
  static VmmAllocation import_fd(int fd, std::size_t bytes, int pe, int owner_pe);
  VmmAllocation(VmmAllocation&& o) noexcept;
  VmmAllocation& operator=(VmmAllocation&& o) noexcept;
  VmmAllocation(const VmmAllocation&) = delete;
  VmmAllocation& operator=(const VmmAllocation&) = delete;
  ~VmmAllocation();

  // A new fd that refers to this allocation, for exchange_node_fds. Throws Error(backend).
  Fd export_fd() const;
  std::uint64_t handle() const { return handle_; }
  std::size_t bytes() const { return bytes_; }
  bool valid() const { return handle_ != 0; }

 private:
  std::uint64_t handle_ = 0;  // CUmemGenericAllocationHandle
  std::size_t bytes_ = 0;
  int pe_ = -1;
};

// A reserved virtual range with allocations mapped into it, read/write for `device`; the rest of
// the range stays reserved and unmapped, so an access there faults. Unmapped and freed on
// destruction (before the allocation handles are released).
class VmmMapping {
 public:
  // An allocation and the offset, from the reservation's start, it is mapped at (a multiple of
  // the granularity).
  struct Piece {
    const VmmAllocation* allocation = nullptr;
    std::size_t offset = 0;
  };

  VmmMapping() = default;
  // One allocation filling its own reservation. Throws Error(backend) naming `pe` (this PE) and
  // `owner_pe` (whose memory it is).
  VmmMapping(const VmmAllocation& allocation, int device, int pe, int owner_pe);
  // A reservation of `reserved` bytes with `pieces` mapped into it (issue 17: a heap and its
  // control area with unmapped guards around and between them). Throws as above.
  VmmMapping(std::size_t reserved, std::initializer_list<Piece> pieces, int device, int pe,
             int owner_pe);
  VmmMapping(VmmMapping&& o) noexcept;
  VmmMapping& operator=(VmmMapping&& o) noexcept;
  VmmMapping(const VmmMapping&) = delete;
  VmmMapping& operator=(const VmmMapping&) = delete;
  ~VmmMapping();

  // The reservation's start.
  char* base() const { return reinterpret_cast<char*>(static_cast<std::uintptr_t>(address_)); }

 private:
  void reset() noexcept;
  std::uint64_t address_ = 0;  // CUdeviceptr
  std::size_t bytes_ = 0;
  std::vector<std::pair<std::size_t, std::size_t>> mapped_;  // offset, bytes of each piece
};

}  // namespace tessera::detail::cuda
