// The HIP wrapper: every hip* runtime call of the library. Compiled by the host C++ compiler
// against ROCm's C API (__HIP_PLATFORM_AMD__), so it needs no hipcc; linked to libamdhip64, which
// loads on a machine without an AMD GPU and reports hipErrorNoDevice there.
#include "runtime/hip_runtime.hpp"

#include <hip/hip_runtime_api.h>

#include <cstring>
#include <string>
#include <utility>

#include "runtime/hip_backend.hpp"
#include "tessera/error.hpp"

namespace tessera::detail::hip {
namespace {

void check(hipError_t result, const std::string& call, int pe) {
  if (result == hipSuccess) return;
  (void)hipGetLastError();  // clear a non-sticky error so later calls do not report it
  const ErrorCode code =
      result == hipErrorOutOfMemory ? ErrorCode::out_of_memory : ErrorCode::backend;
  throw Error(code, pe, call + " failed: " + hipGetErrorString(result));
}

class HipStream final : public NativeStream {
 public:
  HipStream(int device, int pe) : device_(device), pe_(pe) {
    set_device(device, pe);
    check(hipStreamCreateWithFlags(&stream_, hipStreamNonBlocking), "hipStreamCreateWithFlags", pe);
  }
  ~HipStream() override {
    if (stream_ == nullptr) return;
    (void)hipSetDevice(device_);
    (void)hipStreamSynchronize(stream_);
    (void)hipStreamDestroy(stream_);
  }
  void* handle() const override { return stream_; }
  int device() const override { return device_; }
  void synchronize() override {
    set_device(device_, pe_);
    check(hipStreamSynchronize(stream_), "hipStreamSynchronize (a kernel on the PE's stream)", pe_);
  }

 private:
  hipStream_t stream_ = nullptr;
  int device_;
  int pe_;
};

}  // namespace

Probe probe() {
  Probe p;
  int count = 0;
  const hipError_t result = hipGetDeviceCount(&count);
  if (result != hipSuccess) {
    (void)hipGetLastError();
    p.why_none = std::string("hipGetDeviceCount failed: ") + hipGetErrorString(result);
    return p;
  }
  if (count <= 0) {
    p.why_none = "hipGetDeviceCount reports no device";
    return p;
  }
  p.devices = count;
  return p;
}

int select_device(int node_pe, int devices, int pe) {
  const int device = node_pe % devices;
  set_device(device, pe);
  // Initialises the device's context now, so a failure names the device here rather than in the
  // first allocation.
  check(hipFree(nullptr), "hipFree(nullptr) (initialising device " + std::to_string(device) + ")",
        pe);
  return device;
}

std::unique_ptr<NativeStream> make_stream(int device, int pe) {
  return std::make_unique<HipStream>(device, pe);
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
  check(hipSetDevice(device), "hipSetDevice(" + std::to_string(device) + ")", pe);
}

Uuid device_uuid(int device, int pe) {
  hipDevice_t handle{};
  check(hipDeviceGet(&handle, device), "hipDeviceGet(" + std::to_string(device) + ")", pe);
  hipUUID uuid{};
  check(hipDeviceGetUuid(&uuid, handle), "hipDeviceGetUuid", pe);
  static_assert(sizeof(uuid.bytes) == sizeof(Uuid));
  Uuid out;
  std::memcpy(out.data(), uuid.bytes, out.size());
  return out;
}

int device_with_uuid(const Uuid& uuid) {
  int count = 0;
  if (hipGetDeviceCount(&count) != hipSuccess) {
    (void)hipGetLastError();
    return -1;
  }
  for (int d = 0; d < count; ++d) {
    hipDevice_t handle{};
    hipUUID seen{};
    if (hipDeviceGet(&handle, d) != hipSuccess || hipDeviceGetUuid(&seen, handle) != hipSuccess) {
      continue;
    }
    if (std::memcmp(seen.bytes, uuid.data(), uuid.size()) == 0) return d;
  }
  (void)hipGetLastError();
  return -1;
}

bool can_access_peer(int device, int peer_device) {
  if (device == peer_device) return true;
  int can = 0;
  if (hipDeviceCanAccessPeer(&can, device, peer_device) != hipSuccess) {
    (void)hipGetLastError();
    return false;
  }
  return can != 0;
}

void copy(void* dst, const void* src, std::size_t bytes, int device, int pe) {
  if (bytes == 0) return;
  set_device(device, pe);
  check(hipMemcpy(dst, src, bytes, hipMemcpyDefault), "hipMemcpy", pe);
}

void zero(void* dst, std::size_t bytes, int device, int pe) {
  if (bytes == 0) return;
  set_device(device, pe);
  check(hipMemset(dst, 0, bytes), "hipMemset", pe);
  // hipMemset may return before the fill; callers publish the memory right after.
  check(hipDeviceSynchronize(), "hipDeviceSynchronize (after hipMemset)", pe);
}

FineGrainedMemory::FineGrainedMemory(std::size_t bytes, int device, int pe)
    : device_(device), pe_(pe) {
  set_device(device, pe);
  void* p = nullptr;
  check(hipExtMallocWithFlags(&p, bytes, hipDeviceMallocFinegrained),
        "hipExtMallocWithFlags(" + std::to_string(bytes) + ", hipDeviceMallocFinegrained)", pe);
  ptr_ = static_cast<char*>(p);
}

FineGrainedMemory::FineGrainedMemory(FineGrainedMemory&& o) noexcept
    : ptr_(std::exchange(o.ptr_, nullptr)), device_(o.device_), pe_(o.pe_) {}

FineGrainedMemory& FineGrainedMemory::operator=(FineGrainedMemory&& o) noexcept {
  if (this != &o) {
    if (ptr_ != nullptr) (void)hipFree(ptr_);
    ptr_ = std::exchange(o.ptr_, nullptr);
    device_ = o.device_;
    pe_ = o.pe_;
  }
  return *this;
}

FineGrainedMemory::~FineGrainedMemory() {
  if (ptr_ == nullptr) return;
  (void)hipSetDevice(device_);
  (void)hipFree(ptr_);
}

IpcHandle FineGrainedMemory::ipc_handle() const {
  hipIpcMemHandle_t handle{};
  check(hipIpcGetMemHandle(&handle, ptr_), "hipIpcGetMemHandle", pe_);
  static_assert(sizeof(handle) == sizeof(IpcHandle));
  IpcHandle out;
  std::memcpy(out.data(), &handle, sizeof(handle));
  return out;
}

IpcMapping::IpcMapping(const IpcHandle& handle, int device, int pe, int owner_pe)
    : device_(device) {
  set_device(device, pe);
  hipIpcMemHandle_t h{};
  std::memcpy(&h, handle.data(), sizeof(h));
  void* p = nullptr;
  check(hipIpcOpenMemHandle(&p, h, hipIpcMemLazyEnablePeerAccess),
        "hipIpcOpenMemHandle (heap of PE " + std::to_string(owner_pe) + ")", pe);
  ptr_ = static_cast<char*>(p);
}

IpcMapping::IpcMapping(IpcMapping&& o) noexcept
    : ptr_(std::exchange(o.ptr_, nullptr)), device_(o.device_) {}

IpcMapping& IpcMapping::operator=(IpcMapping&& o) noexcept {
  if (this != &o) {
    if (ptr_ != nullptr) (void)hipIpcCloseMemHandle(ptr_);
    ptr_ = std::exchange(o.ptr_, nullptr);
    device_ = o.device_;
  }
  return *this;
}

IpcMapping::~IpcMapping() {
  if (ptr_ == nullptr) return;
  (void)hipSetDevice(device_);
  (void)hipIpcCloseMemHandle(ptr_);
}

PinnedMapped::PinnedMapped(std::size_t bytes, int device, int pe) {
  set_device(device, pe);
  check(hipHostMalloc(&host_, bytes, hipHostMallocMapped | hipHostMallocPortable),
        "hipHostMalloc(" + std::to_string(bytes) + ", mapped)", pe);
  std::memset(host_, 0, bytes);
  try {
    check(hipHostGetDevicePointer(&device_ptr_, host_, 0), "hipHostGetDevicePointer", pe);
  } catch (...) {
    (void)hipHostFree(host_);
    host_ = nullptr;
    throw;
  }
}

PinnedMapped::PinnedMapped(PinnedMapped&& o) noexcept
    : host_(std::exchange(o.host_, nullptr)), device_ptr_(std::exchange(o.device_ptr_, nullptr)) {}

PinnedMapped& PinnedMapped::operator=(PinnedMapped&& o) noexcept {
  if (this != &o) {
    if (host_ != nullptr) (void)hipHostFree(host_);
    host_ = std::exchange(o.host_, nullptr);
    device_ptr_ = std::exchange(o.device_ptr_, nullptr);
  }
  return *this;
}

PinnedMapped::~PinnedMapped() {
  if (host_ != nullptr) (void)hipHostFree(host_);
}

}  // namespace tessera::detail::hip
