#include "runtime/cuda_runtime.hpp"

#include <cuda_runtime_api.h>

#include <cstring>
#include <string>
#include <utility>

#include "runtime/cuda_backend.hpp"
#include "tessera/error.hpp"

namespace tessera::detail::cuda {
namespace {

void check(cudaError_t result, const std::string& call, int pe) {
  if (result == cudaSuccess) return;
  (void)cudaGetLastError();  // clear a non-sticky error so later calls do not report it
  const ErrorCode code =
      result == cudaErrorMemoryAllocation ? ErrorCode::out_of_memory : ErrorCode::backend;
  throw Error(code, pe, call + " failed: " + cudaGetErrorString(result));
}

class CudaStream final : public NativeStream {
 public:
  CudaStream(int device, int pe) : device_(device), pe_(pe) {
    set_device(device, pe);
    check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreateWithFlags",
          pe);
  }
  ~CudaStream() override {
    if (stream_ == nullptr) return;
    cudaSetDevice(device_);
    cudaStreamSynchronize(stream_);
    cudaStreamDestroy(stream_);
  }
  void* handle() const override { return stream_; }
  int device() const override { return device_; }
  void synchronize() override {
    set_device(device_, pe_);
    check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize (a kernel on the PE's stream)",
          pe_);
  }

 private:
  cudaStream_t stream_ = nullptr;
  int device_;
  int pe_;
};

}  // namespace

Probe probe() {
  Probe p;
  int count = 0;
  const cudaError_t result = cudaGetDeviceCount(&count);
  if (result != cudaSuccess) {
    (void)cudaGetLastError();
    p.why_none = std::string("cudaGetDeviceCount failed: ") + cudaGetErrorString(result);
    return p;
  }
  if (count <= 0) {
    p.why_none = "cudaGetDeviceCount reports no device";
    return p;
  }
  p.devices = count;
  return p;
}

int select_device(int node_pe, int devices, int pe) {
  const int device = node_pe % devices;
  set_device(device, pe);
  // Creates the primary context now, so the driver calls of the heap find one.
  check(cudaFree(nullptr),
        "cudaFree(nullptr) (creating the context of device " + std::to_string(device) + ")", pe);
  return device;
}

std::unique_ptr<NativeStream> make_stream(int device, int pe) {
  return std::make_unique<CudaStream>(device, pe);
}

ProxyRing make_proxy_ring(std::size_t bytes, int device, int pe) {
  auto memory = std::make_shared<PinnedMapped>(bytes, device, pe);
  ProxyRing ring;
  ring.host = memory->host();
  ring.device = memory->device();
  ring.bytes = bytes;
  ring.owner = std::move(memory);
  return ring;
}

void set_device(int device, int pe) {
  check(cudaSetDevice(device), "cudaSetDevice(" + std::to_string(device) + ")", pe);
}

Uuid device_uuid(int device, int pe) {
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties", pe);
  Uuid uuid;
  std::memcpy(uuid.data(), prop.uuid.bytes, uuid.size());
  return uuid;
}

int device_with_uuid(const Uuid& uuid) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) return -1;
  for (int d = 0; d < count; ++d) {
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, d) != cudaSuccess) continue;
    if (std::memcmp(prop.uuid.bytes, uuid.data(), uuid.size()) == 0) return d;
  }
  (void)cudaGetLastError();
  return -1;
}

bool can_access_peer(int device, int peer_device) {
  if (device == peer_device) return true;
  int can = 0;
  if (cudaDeviceCanAccessPeer(&can, device, peer_device) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  return can != 0;
}

void copy(void* dst, const void* src, std::size_t bytes, int device, int pe) {
  if (bytes == 0) return;
  set_device(device, pe);
  check(cudaMemcpy(dst, src, bytes, cudaMemcpyDefault), "cudaMemcpy", pe);
}

void zero(void* dst, std::size_t bytes, int device, int pe) {
  if (bytes == 0) return;
  set_device(device, pe);
  check(cudaMemset(dst, 0, bytes), "cudaMemset", pe);
  // cudaMemset may return before the fill on device memory; callers publish it right after.
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize (after cudaMemset)", pe);
}

DeviceMemory::DeviceMemory(std::size_t bytes, int device, int pe) : device_(device), pe_(pe) {
  set_device(device, pe);
  void* p = nullptr;
  check(cudaMalloc(&p, bytes), "cudaMalloc(" + std::to_string(bytes) + ")", pe);
  ptr_ = static_cast<char*>(p);
}

DeviceMemory::DeviceMemory(DeviceMemory&& o) noexcept
    : ptr_(std::exchange(o.ptr_, nullptr)), device_(o.device_), pe_(o.pe_) {}

DeviceMemory& DeviceMemory::operator=(DeviceMemory&& o) noexcept {
  if (this != &o) {
    if (ptr_ != nullptr) cudaFree(ptr_);
    ptr_ = std::exchange(o.ptr_, nullptr);
    device_ = o.device_;
    pe_ = o.pe_;
  }
  return *this;
}

DeviceMemory::~DeviceMemory() {
  if (ptr_ == nullptr) return;
  cudaSetDevice(device_);
  cudaFree(ptr_);
}

IpcHandle DeviceMemory::ipc_handle() const {
  cudaIpcMemHandle_t handle{};
  check(cudaIpcGetMemHandle(&handle, ptr_), "cudaIpcGetMemHandle", pe_);
  static_assert(sizeof(handle) == sizeof(IpcHandle));
  IpcHandle out;
  std::memcpy(out.data(), &handle, sizeof(handle));
  return out;
}

IpcMapping::IpcMapping(const IpcHandle& handle, int device, int pe, int owner_pe)
    : device_(device) {
  set_device(device, pe);
  cudaIpcMemHandle_t h{};
  std::memcpy(&h, handle.data(), sizeof(h));
  void* p = nullptr;
  check(cudaIpcOpenMemHandle(&p, h, cudaIpcMemLazyEnablePeerAccess),
        "cudaIpcOpenMemHandle (heap of PE " + std::to_string(owner_pe) + ")", pe);
  ptr_ = static_cast<char*>(p);
}

IpcMapping::IpcMapping(IpcMapping&& o) noexcept
    : ptr_(std::exchange(o.ptr_, nullptr)), device_(o.device_) {}

IpcMapping& IpcMapping::operator=(IpcMapping&& o) noexcept {
  if (this != &o) {
    if (ptr_ != nullptr) cudaIpcCloseMemHandle(ptr_);
    ptr_ = std::exchange(o.ptr_, nullptr);
    device_ = o.device_;
  }
  return *this;
}

IpcMapping::~IpcMapping() {
  if (ptr_ == nullptr) return;
  cudaSetDevice(device_);
  cudaIpcCloseMemHandle(ptr_);
}

PinnedMapped::PinnedMapped(std::size_t bytes, int device, int pe) {
  set_device(device, pe);
  check(cudaHostAlloc(&host_, bytes, cudaHostAllocMapped | cudaHostAllocPortable),
        "cudaHostAlloc(" + std::to_string(bytes) + ", mapped)", pe);
  std::memset(host_, 0, bytes);
  try {
    check(cudaHostGetDevicePointer(&device_ptr_, host_, 0), "cudaHostGetDevicePointer", pe);
  } catch (...) {
    cudaFreeHost(host_);
    host_ = nullptr;
    throw;
  }
}

PinnedMapped::PinnedMapped(PinnedMapped&& o) noexcept
    : host_(std::exchange(o.host_, nullptr)), device_ptr_(std::exchange(o.device_ptr_, nullptr)) {}

PinnedMapped& PinnedMapped::operator=(PinnedMapped&& o) noexcept {
  if (this != &o) {
    if (host_ != nullptr) cudaFreeHost(host_);
    host_ = std::exchange(o.host_, nullptr);
    device_ptr_ = std::exchange(o.device_ptr_, nullptr);
  }
  return *this;
}

PinnedMapped::~PinnedMapped() {
  if (host_ != nullptr) cudaFreeHost(host_);
}

}  // namespace tessera::detail::cuda
