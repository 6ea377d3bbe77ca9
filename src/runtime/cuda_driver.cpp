#include "runtime/cuda_driver.hpp"

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <mutex>
#include <string>
#include <utility>

#include "tessera/error.hpp"
#include "transport/heap_registration.hpp"  // local_buffer_memory

namespace tessera::detail::cuda {
namespace {

// The driver ABI these signatures follow: every call below has kept it since CUDA 12.0.
constexpr unsigned kDriverAbiVersion = 12000;

// The driver entry points, resolved once per process. All null when the driver is missing.
struct DriverApi {
  decltype(&::cuGetErrorString) get_error_string = nullptr;
  decltype(&::cuDeviceGet) device_get = nullptr;
  decltype(&::cuDeviceGetAttribute) device_get_attribute = nullptr;
  decltype(&::cuMemGetAllocationGranularity) mem_get_allocation_granularity = nullptr;
  decltype(&::cuMemCreate) mem_create = nullptr;
  decltype(&::cuMemRelease) mem_release = nullptr;
  decltype(&::cuMemExportToShareableHandle) mem_export_to_shareable_handle = nullptr;
  decltype(&::cuMemImportFromShareableHandle) mem_import_from_shareable_handle = nullptr;
  decltype(&::cuMemAddressReserve) mem_address_reserve = nullptr;
  decltype(&::cuMemAddressFree) mem_address_free = nullptr;
  decltype(&::cuMemMap) mem_map = nullptr;
  decltype(&::cuMemUnmap) mem_unmap = nullptr;
  decltype(&::cuMemSetAccess) mem_set_access = nullptr;
  std::string missing;  // the first symbol that could not be resolved
};

template <class Fn>
void resolve(DriverApi& api, const char* symbol, Fn& fn) {
  void* p = nullptr;
  cudaDriverEntryPointQueryResult status = cudaDriverEntryPointSymbolNotFound;
  if (cudaGetDriverEntryPointByVersion(symbol, &p, kDriverAbiVersion, cudaEnableDefault, &status) !=
          cudaSuccess ||
      status != cudaDriverEntryPointSuccess || p == nullptr) {
    (void)cudaGetLastError();  // do not leave the failure for an unrelated later call
    if (api.missing.empty()) api.missing = symbol;
    return;
  }
  fn = reinterpret_cast<Fn>(p);
}

const DriverApi& driver() {
  static DriverApi api;
  static std::once_flag once;
  std::call_once(once, [] {
    resolve(api, "cuGetErrorString", api.get_error_string);
    resolve(api, "cuDeviceGet", api.device_get);
    resolve(api, "cuDeviceGetAttribute", api.device_get_attribute);
    resolve(api, "cuMemGetAllocationGranularity", api.mem_get_allocation_granularity);
    resolve(api, "cuMemCreate", api.mem_create);
    resolve(api, "cuMemRelease", api.mem_release);
    resolve(api, "cuMemExportToShareableHandle", api.mem_export_to_shareable_handle);
    resolve(api, "cuMemImportFromShareableHandle", api.mem_import_from_shareable_handle);
    resolve(api, "cuMemAddressReserve", api.mem_address_reserve);
    resolve(api, "cuMemAddressFree", api.mem_address_free);
    resolve(api, "cuMemMap", api.mem_map);
    resolve(api, "cuMemUnmap", api.mem_unmap);
    resolve(api, "cuMemSetAccess", api.mem_set_access);
  });
  return api;
}

// The driver, or Error(backend) when an entry point is missing.
const DriverApi& require_driver(int pe) {
  const DriverApi& api = driver();
  if (!api.missing.empty()) {
    throw Error(ErrorCode::backend, pe,
                "the CUDA driver entry point " + api.missing +
                    " could not be resolved (is an NVIDIA driver for CUDA >= 12 installed?)");
  }
  return api;
}

void check(CUresult result, const char* call, int pe) {
  if (result == CUDA_SUCCESS) return;
  const char* text = nullptr;
  const DriverApi& api = driver();
  if (api.get_error_string == nullptr || api.get_error_string(result, &text) != CUDA_SUCCESS ||
      text == nullptr) {
    text = "unknown error";
  }
  const ErrorCode code =
      result == CUDA_ERROR_OUT_OF_MEMORY ? ErrorCode::out_of_memory : ErrorCode::backend;
  throw Error(
      code, pe,
      std::string(call) + " failed: " + text + " (CUresult " + std::to_string(result) + ")");
}

// --- issue 18 item 3: GPUDirect RDMA on the VMM heap ------------------------------
// A cuMemCreate allocation a NIC may read and write directly (the heap the proxy registers with
// FI_HMEM_CUDA) must ask for it with allocFlags.gpuDirectRDMACapable, which the driver accepts
// only where CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED is set. Elsewhere the
// flag stays clear and a provider that needs GPUDirect fails the heap's fi_mr_regattr, naming it.
bool rdma_with_vmm(const DriverApi& api, int device) {
  if (!api.missing.empty()) return false;
  CUdevice dev = 0;
  int supported = 0;
  if (api.device_get(&dev, device) != CUDA_SUCCESS ||
      api.device_get_attribute(&supported,
                               CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED,
                               dev) != CUDA_SUCCESS) {
    return false;
  }
  return supported != 0;
}
// --- end of the issue 18 item 3 block
// -------------------------------------------------------------------------

CUmemAllocationProp device_allocation(int device) {
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = device;
  prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  // Issue 18 item 3: the same flags for the granularity query and cuMemCreate.
  prop.allocFlags.gpuDirectRDMACapable = rdma_with_vmm(driver(), device) ? 1 : 0;
  return prop;
}

}  // namespace

// --- issue 18 item 3 ------------------------------------------------------------------
bool vmm_rdma_supported(int device) { return rdma_with_vmm(driver(), device); }

}  // namespace tessera::detail::cuda

namespace tessera::detail {

// Where a proxy put/get's local buffer lives (transport/heap_registration.hpp): device memory
// (VMM-mapped, cudaMalloc'd or managed: all FI_HMEM_CUDA) or host memory (pageable or pinned).
HeapMemory local_buffer_memory(const void* p, int* device) {
  *device = -1;
  cudaPointerAttributes attributes{};
  if (cudaPointerGetAttributes(&attributes, p) != cudaSuccess) {
    (void)cudaGetLastError();  // an unknown pointer is host memory; leave no sticky error
    return HeapMemory::host;
  }
  if (attributes.type != cudaMemoryTypeDevice && attributes.type != cudaMemoryTypeManaged)
    return HeapMemory::host;
  *device = attributes.device;
  return HeapMemory::cuda;
}

}  // namespace tessera::detail

namespace tessera::detail::cuda {
// --- end of the issue 18 item 3 block
// -------------------------------------------------------------------------

bool vmm_supported(int device) {
  const DriverApi& api = driver();
  if (!api.missing.empty()) return false;
  CUdevice dev = 0;
  if (api.device_get(&dev, device) != CUDA_SUCCESS) return false;
  int vmm = 0, posix_fd = 0;
  if (api.device_get_attribute(&vmm, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED,
                               dev) != CUDA_SUCCESS ||
      api.device_get_attribute(&posix_fd,
                               CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED,
                               dev) != CUDA_SUCCESS) {
    return false;
  }
  return vmm != 0 && posix_fd != 0;
}

std::size_t vmm_granularity(int device, int pe) {
  const DriverApi& api = require_driver(pe);
  CUmemAllocationProp prop = device_allocation(device);
  std::size_t granularity = 0;
  check(
      api.mem_get_allocation_granularity(&granularity, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED),
      "cuMemGetAllocationGranularity", pe);
  return granularity;
}

VmmAllocation VmmAllocation::create(std::size_t bytes, int device, int pe) {
  const DriverApi& api = require_driver(pe);
  CUmemAllocationProp prop = device_allocation(device);
  CUmemGenericAllocationHandle handle = 0;
  check(api.mem_create(&handle, bytes, &prop, 0), "cuMemCreate", pe);
  VmmAllocation a;
  a.handle_ = handle;
  a.bytes_ = bytes;
  a.pe_ = pe;
  return a;
}

VmmAllocation VmmAllocation::import_fd(int fd, std::size_t bytes, int pe, int owner_pe) {
  const DriverApi& api = require_driver(pe);
  CUmemGenericAllocationHandle handle = 0;
  // The fd is passed by value, cast to a pointer, as the driver API asks for POSIX fds.
  void* os_handle = reinterpret_cast<void*>(static_cast<std::uintptr_t>(fd));
  const std::string call =
      "cuMemImportFromShareableHandle (heap of PE " + std::to_string(owner_pe) + ")";
  check(api.mem_import_from_shareable_handle(&handle, os_handle,
                                             CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR),
        call.c_str(), pe);
  VmmAllocation a;
  a.handle_ = handle;
  a.bytes_ = bytes;
  a.pe_ = pe;
  return a;
}

VmmAllocation::VmmAllocation(VmmAllocation&& o) noexcept
    : handle_(std::exchange(o.handle_, 0)), bytes_(std::exchange(o.bytes_, 0)), pe_(o.pe_) {}

VmmAllocation& VmmAllocation::operator=(VmmAllocation&& o) noexcept {
  if (this != &o) {
    if (handle_ != 0) driver().mem_release(handle_);
    handle_ = std::exchange(o.handle_, 0);
    bytes_ = std::exchange(o.bytes_, 0);
    pe_ = o.pe_;
  }
  return *this;
}

VmmAllocation::~VmmAllocation() {
  if (handle_ != 0) driver().mem_release(handle_);
}

Fd VmmAllocation::export_fd() const {
  const DriverApi& api = require_driver(pe_);
  int fd = -1;
  check(
      api.mem_export_to_shareable_handle(&fd, handle_, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
      "cuMemExportToShareableHandle", pe_);
  return Fd(fd);
}

VmmMapping::VmmMapping(const VmmAllocation& allocation, int device, int pe, int owner_pe)
    : VmmMapping(allocation.bytes(), {{&allocation, 0}}, device, pe, owner_pe) {}

VmmMapping::VmmMapping(std::size_t reserved, std::initializer_list<Piece> pieces, int device,
                       int pe, int owner_pe) {
  const DriverApi& api = require_driver(pe);
  const std::string whose = " (heap of PE " + std::to_string(owner_pe) + ")";
  CUdeviceptr address = 0;
  check(api.mem_address_reserve(&address, reserved, 0, 0, 0),
        ("cuMemAddressReserve" + whose).c_str(), pe);
  address_ = address;
  bytes_ = reserved;
  CUmemAccessDesc access{};
  access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  access.location.id = device;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  try {
    for (const Piece& piece : pieces) {
      const CUdeviceptr at = address + piece.offset;
      const std::size_t bytes = piece.allocation->bytes();
      check(api.mem_map(at, bytes, 0, piece.allocation->handle(), 0), ("cuMemMap" + whose).c_str(),
            pe);
      mapped_.emplace_back(piece.offset, bytes);
      check(api.mem_set_access(at, bytes, &access, 1), ("cuMemSetAccess" + whose).c_str(), pe);
    }
  } catch (...) {
    reset();
    throw;
  }
}

VmmMapping::VmmMapping(VmmMapping&& o) noexcept
    : address_(std::exchange(o.address_, 0)),
      bytes_(std::exchange(o.bytes_, 0)),
      mapped_(std::exchange(o.mapped_, {})) {}

VmmMapping& VmmMapping::operator=(VmmMapping&& o) noexcept {
  if (this != &o) {
    reset();
    address_ = std::exchange(o.address_, 0);
    bytes_ = std::exchange(o.bytes_, 0);
    mapped_ = std::exchange(o.mapped_, {});
  }
  return *this;
}

VmmMapping::~VmmMapping() { reset(); }

void VmmMapping::reset() noexcept {
  if (address_ == 0) return;
  const DriverApi& api = driver();
  for (const auto& [offset, bytes] : mapped_) api.mem_unmap(address_ + offset, bytes);
  mapped_.clear();
  api.mem_address_free(address_, bytes_);
  address_ = 0;
  bytes_ = 0;
}

}  // namespace tessera::detail::cuda
