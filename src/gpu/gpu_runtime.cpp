// The GPU runtime wrapper, written once over tessera/detail/gpu_names.hpp. Compiled by the host
// C++ compiler against the runtime's C API: with TESSERA_GPU_CUDA (cudart, static) into the cuda
// backend, with TESSERA_GPU_HIP (libamdhip64, which loads on a machine without an AMD GPU and
// reports no device there) into the hip backend.
#include "gpu/gpu_runtime.hpp"

#include <cstring>
#include <string>
#include <utility>

#include "gpu/gpu_backend.hpp"
#include "tessera/error.hpp"

namespace tessera::detail::TESSERA_GPU_NS {
namespace {

const std::string kApi = TESSERA_GPU_NAME_STRING;

DeviceCountResult classify(TESSERA_GPU(Error_t) result) {
  if (result == TESSERA_GPU(Success)) return DeviceCountResult::ok;
  if (result == TESSERA_GPU(ErrorNoDevice)) return DeviceCountResult::no_device;
  if (result == TESSERA_GPU(ErrorInsufficientDriver)) return DeviceCountResult::insufficient_driver;
  return DeviceCountResult::other_error;
}

}  // namespace

void check(TESSERA_GPU(Error_t) result, const std::string& call, int pe) {
  if (result == TESSERA_GPU(Success)) return;
  (void)TESSERA_GPU(GetLastError)();  // clear a non-sticky error so later calls do not report it
  const ErrorCode code =
      result == TESSERA_GPU_ERROR_OUT_OF_MEMORY ? ErrorCode::out_of_memory : ErrorCode::backend;
  throw Error(code, pe, call + " failed: " + TESSERA_GPU(GetErrorString)(result));
}

GpuProbe probe() {
  GpuProbe p;
  int driver = 0, runtime = 0;
  (void)TESSERA_GPU(DriverGetVersion)(&driver);
  (void)TESSERA_GPU(RuntimeGetVersion)(&runtime);
  p.driver_version = normalized_version(driver);
  p.runtime_version = normalized_version(runtime);
  int count = 0;
  const TESSERA_GPU(Error_t) result = TESSERA_GPU(GetDeviceCount)(&count);
  const std::string text = TESSERA_GPU(GetErrorString)(result);
  (void)TESSERA_GPU(GetLastError)();
  DeviceCountResult kind = classify(result);
  if (kind == DeviceCountResult::other_error && p.driver_version == 0) {
    kind = DeviceCountResult::no_driver;
  }
  p.why_none = probe_cause(kApi.c_str(), kind, result == TESSERA_GPU(Success) ? count : 0,
                           p.driver_version, p.runtime_version, kMinimumRuntimeVersion, text);
  if (p.why_none.empty()) p.devices = count;
  return p;
}

void set_device(int device, int pe) {
  check(TESSERA_GPU(SetDevice)(device), kApi + " SetDevice(" + std::to_string(device) + ")", pe);
}

Uuid device_uuid(int device, int pe) {
  unsigned char bytes[16] = {};
  check(device_uuid_bytes(device, bytes), kApi + " device UUID query", pe);
  Uuid uuid;
  std::memcpy(uuid.data(), bytes, uuid.size());
  return uuid;
}

int device_with_uuid(const Uuid& uuid) {
  int count = 0;
  if (TESSERA_GPU(GetDeviceCount)(&count) != TESSERA_GPU(Success)) {
    (void)TESSERA_GPU(GetLastError)();
    return -1;
  }
  for (int d = 0; d < count; ++d) {
    unsigned char seen[16] = {};
    if (device_uuid_bytes(d, seen) != TESSERA_GPU(Success)) continue;
    if (std::memcmp(seen, uuid.data(), uuid.size()) == 0) return d;
  }
  (void)TESSERA_GPU(GetLastError)();
  return -1;
}

bool can_access_peer(int device, int peer_device) {
  if (device == peer_device) return true;
  int can = 0;
  if (TESSERA_GPU(DeviceCanAccessPeer)(&can, device, peer_device) != TESSERA_GPU(Success)) {
    (void)TESSERA_GPU(GetLastError)();
    return false;
  }
  return can != 0;
}

bool native_peer_atomics(int device, int peer_device) {
  if (device == peer_device) return true;
  int native = 0;
  if (TESSERA_GPU(DeviceGetP2PAttribute)(&native, TESSERA_GPU(DevP2PAttrNativeAtomicSupported),
                                         device, peer_device) != TESSERA_GPU(Success)) {
    (void)TESSERA_GPU(GetLastError)();
    return false;
  }
  return native != 0;
}

int device_attribute(TESSERA_GPU_DEVICE_ATTR attribute, int device, int fallback) {
  int value = 0;
  if (TESSERA_GPU(DeviceGetAttribute)(&value, attribute, device) != TESSERA_GPU(Success)) {
    (void)TESSERA_GPU(GetLastError)();
    return fallback;
  }
  return value;
}

GpuStream::GpuStream(int device, int pe) : device_(device), pe_(pe) {
  set_device(device, pe);
  check(TESSERA_GPU(StreamCreateWithFlags)(&stream_, TESSERA_GPU(StreamNonBlocking)),
        kApi + " StreamCreateWithFlags", pe);
}

GpuStream::~GpuStream() {
  if (stream_ == nullptr) return;
  (void)TESSERA_GPU(SetDevice)(device_);
  (void)TESSERA_GPU(StreamSynchronize)(stream_);
  (void)TESSERA_GPU(StreamDestroy)(stream_);
}

void GpuStream::synchronize() {
  set_device(device_, pe_);
  check(TESSERA_GPU(StreamSynchronize)(stream_),
        kApi + " StreamSynchronize (a kernel on the PE's stream)", pe_);
}

void GpuStream::begin_capture() {
  set_device(device_, pe_);
  check(TESSERA_GPU(StreamBeginCapture)(stream_, TESSERA_GPU(StreamCaptureModeThreadLocal)),
        kApi + " StreamBeginCapture", pe_);
}

namespace {

// An instantiated graph and the graph it came from, both destroyed with it.
class GpuGraph final : public NativeGraph {
 public:
  GpuGraph(TESSERA_GPU(Graph_t) graph, int device, int pe)
      : graph_(graph), device_(device), pe_(pe) {
    const TESSERA_GPU(Error_t) made = TESSERA_GPU(GraphInstantiateWithFlags)(&exec_, graph_, 0);
    if (made != TESSERA_GPU(Success)) {
      (void)TESSERA_GPU(GraphDestroy)(graph_);
      check(made, kApi + " GraphInstantiateWithFlags (of the captured work)", pe_);
    }
    (void)TESSERA_GPU(GraphGetNodes)(graph_, nullptr, &nodes_);
  }
  ~GpuGraph() override {
    (void)TESSERA_GPU(SetDevice)(device_);
    (void)TESSERA_GPU(GraphExecDestroy)(exec_);
    (void)TESSERA_GPU(GraphDestroy)(graph_);
  }
  GpuGraph(const GpuGraph&) = delete;
  GpuGraph& operator=(const GpuGraph&) = delete;

  void launch(NativeStream& stream) override {
    set_device(device_, pe_);
    check(TESSERA_GPU(GraphLaunch)(exec_, static_cast<TESSERA_GPU(Stream_t)>(stream.handle())),
          kApi + " GraphLaunch", pe_);
  }
  std::size_t size() const override { return nodes_; }
  int device() const override { return device_; }

 private:
  TESSERA_GPU(Graph_t) graph_ = nullptr;
  TESSERA_GPU(GraphExec_t) exec_ = nullptr;
  std::size_t nodes_ = 0;
  int device_;
  int pe_;
};

}  // namespace

std::unique_ptr<NativeGraph> GpuStream::end_capture() {
  set_device(device_, pe_);
  TESSERA_GPU(Graph_t) graph = nullptr;
  check(TESSERA_GPU(StreamEndCapture)(stream_, &graph),
        kApi + " StreamEndCapture (a call during the capture could not be captured)", pe_);
  return std::make_unique<GpuGraph>(graph, device_, pe_);
}

void GpuStream::copy_sync(void* dst, const void* src, std::size_t bytes) {
  if (bytes == 0) return;
  set_device(device_, pe_);
  check(TESSERA_GPU(MemcpyAsync)(dst, src, bytes, TESSERA_GPU(MemcpyDefault), stream_),
        kApi + " MemcpyAsync (host copy of heap memory)", pe_);
  check(TESSERA_GPU(StreamSynchronize)(stream_), kApi + " StreamSynchronize (after a host copy)",
        pe_);
}

void GpuStream::zero_sync(void* dst, std::size_t bytes) {
  if (bytes == 0) return;
  set_device(device_, pe_);
  check(TESSERA_GPU(MemsetAsync)(dst, 0, bytes, stream_), kApi + " MemsetAsync", pe_);
  check(TESSERA_GPU(StreamSynchronize)(stream_), kApi + " StreamSynchronize (after a fill)", pe_);
}

HeapMemory::HeapMemory(std::size_t bytes, int device, int pe) : device_(device), pe_(pe) {
  set_device(device, pe);
  void* p = nullptr;
  check(malloc_heap_memory(&p, bytes),
        kApi + " heap allocation of " + std::to_string(bytes) + " bytes", pe);
  ptr_ = static_cast<char*>(p);
}

HeapMemory::HeapMemory(HeapMemory&& o) noexcept
    : ptr_(std::exchange(o.ptr_, nullptr)), device_(o.device_), pe_(o.pe_) {}

HeapMemory& HeapMemory::operator=(HeapMemory&& o) noexcept {
  if (this != &o) {
    reset();
    ptr_ = std::exchange(o.ptr_, nullptr);
    device_ = o.device_;
    pe_ = o.pe_;
  }
  return *this;
}

HeapMemory::~HeapMemory() { reset(); }

void HeapMemory::reset() noexcept {
  if (ptr_ == nullptr) return;
  (void)TESSERA_GPU(SetDevice)(device_);
  (void)TESSERA_GPU(Free)(ptr_);
  ptr_ = nullptr;
}

IpcHandle HeapMemory::ipc_handle() const {
  TESSERA_GPU(IpcMemHandle_t) handle{};
  check(TESSERA_GPU(IpcGetMemHandle)(&handle, ptr_), kApi + " IpcGetMemHandle", pe_);
  static_assert(sizeof(handle) == sizeof(IpcHandle));
  IpcHandle out;
  std::memcpy(out.data(), &handle, sizeof(handle));
  return out;
}

IpcMapping::IpcMapping(const IpcHandle& handle, int device, int pe, int owner_pe)
    : device_(device) {
  set_device(device, pe);
  TESSERA_GPU(IpcMemHandle_t) h{};
  std::memcpy(&h, handle.data(), sizeof(h));
  void* p = nullptr;
  check(TESSERA_GPU(IpcOpenMemHandle)(&p, h, TESSERA_GPU(IpcMemLazyEnablePeerAccess)),
        kApi + " IpcOpenMemHandle (heap of PE " + std::to_string(owner_pe) + ")", pe);
  ptr_ = static_cast<char*>(p);
}

IpcMapping::IpcMapping(IpcMapping&& o) noexcept
    : ptr_(std::exchange(o.ptr_, nullptr)), device_(o.device_) {}

IpcMapping& IpcMapping::operator=(IpcMapping&& o) noexcept {
  if (this != &o) {
    reset();
    ptr_ = std::exchange(o.ptr_, nullptr);
    device_ = o.device_;
  }
  return *this;
}

IpcMapping::~IpcMapping() { reset(); }

void IpcMapping::reset() noexcept {
  if (ptr_ == nullptr) return;
  (void)TESSERA_GPU(SetDevice)(device_);
  (void)TESSERA_GPU(IpcCloseMemHandle)(ptr_);
  ptr_ = nullptr;
}

PinnedMapped::PinnedMapped(std::size_t bytes, int device, int pe) {
  set_device(device, pe);
  check(malloc_mapped_host(&host_, bytes),
        kApi + " mapped pinned host allocation of " + std::to_string(bytes) + " bytes", pe);
  std::memset(host_, 0, bytes);
  try {
    check(TESSERA_GPU(HostGetDevicePointer)(&device_ptr_, host_, 0), kApi + " HostGetDevicePointer",
          pe);
  } catch (...) {
    (void)free_mapped_host(host_);
    host_ = nullptr;
    throw;
  }
}

PinnedMapped::PinnedMapped(PinnedMapped&& o) noexcept
    : host_(std::exchange(o.host_, nullptr)), device_ptr_(std::exchange(o.device_ptr_, nullptr)) {}

PinnedMapped& PinnedMapped::operator=(PinnedMapped&& o) noexcept {
  if (this != &o) {
    if (host_ != nullptr) (void)free_mapped_host(host_);
    host_ = std::exchange(o.host_, nullptr);
    device_ptr_ = std::exchange(o.device_ptr_, nullptr);
  }
  return *this;
}

PinnedMapped::~PinnedMapped() {
  if (host_ != nullptr) (void)free_mapped_host(host_);
}

PeerTable::PeerTable(std::size_t bytes, int device, int pe, GpuStream& stream) {
  set_device(device, pe);
  if (device_attribute(TESSERA_GPU_ATTR_CONCURRENT_MANAGED, device, 0) != 0 &&
      malloc_read_mostly(&managed_, bytes, device, stream.native()) == TESSERA_GPU(Success)) {
    std::memset(managed_, 0, bytes);
    return;
  }
  (void)TESSERA_GPU(GetLastError)();
  managed_ = nullptr;
  pinned_ = PinnedMapped(bytes, device, pe);
  if (pinned_.device() != pinned_.host()) {
    throw Error(ErrorCode::backend, pe,
                "pinned host memory has different host and device addresses (no unified "
                "addressing); the " +
                    kApi + " backend needs it");
  }
}

PeerTable::PeerTable(PeerTable&& o) noexcept
    : managed_(std::exchange(o.managed_, nullptr)), pinned_(std::move(o.pinned_)) {}

PeerTable& PeerTable::operator=(PeerTable&& o) noexcept {
  if (this != &o) {
    reset();
    managed_ = std::exchange(o.managed_, nullptr);
    pinned_ = std::move(o.pinned_);
  }
  return *this;
}

PeerTable::~PeerTable() { reset(); }

void PeerTable::reset() noexcept {
  if (managed_ != nullptr) (void)TESSERA_GPU(Free)(managed_);
  managed_ = nullptr;
  pinned_ = PinnedMapped();
}

}  // namespace tessera::detail::TESSERA_GPU_NS
