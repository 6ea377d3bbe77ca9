// The HIP runtime API calls the heap and streams need, behind RAII handles. hip_runtime.cpp is
// the only code that includes HIP's runtime header (besides the device headers and the launch
// glue, which hipcc compiles). Every failure becomes Error(backend, pe, "<call> failed:
// <hipGetErrorString>"). Internal; built only with TESSERA_HAVE_HIP.
#pragma once

#include <array>
#include <cstddef>

namespace tessera::detail::hip {

using Uuid = std::array<unsigned char, 16>;
using IpcHandle = std::array<char, 64>;  // hipIpcMemHandle_t's bytes

// Makes `device` current on the calling thread.
void set_device(int device, int pe);
// The device's UUID (stable across processes, unlike ordinals under HIP_VISIBLE_DEVICES).
Uuid device_uuid(int device, int pe);
// The ordinal of the visible device with this UUID, or -1.
int device_with_uuid(const Uuid& uuid);
// True when kernels on `device` may load/store memory of `peer_device` (same device: true).
bool can_access_peer(int device, int peer_device);

// Synchronous copies and fills of device (or any unified-address) memory, with `device` current.
void copy(void* dst, const void* src, std::size_t bytes, int device, int pe);
void zero(void* dst, std::size_t bytes, int device, int pe);

// Fine-grained device memory (hipExtMallocWithFlags(hipDeviceMallocFinegrained)): coherent with
// other agents during a kernel, which atomics from peer GPUs and the host need. Freed on
// destruction.
class FineGrainedMemory {
 public:
  FineGrainedMemory() = default;
  FineGrainedMemory(std::size_t bytes, int device, int pe);
  FineGrainedMemory(FineGrainedMemory&& o) noexcept;
  FineGrainedMemory& operator=(FineGrainedMemory&& o) noexcept;
  FineGrainedMemory(const FineGrainedMemory&) = delete;
  FineGrainedMemory& operator=(const FineGrainedMemory&) = delete;
  ~FineGrainedMemory();
  char* get() const { return ptr_; }
  // The IPC handle of this allocation (hipIpcGetMemHandle).
  IpcHandle ipc_handle() const;

 private:
  char* ptr_ = nullptr;
  int device_ = 0;
  int pe_ = -1;
};

// A peer's memory opened through its IPC handle; closed on destruction.
class IpcMapping {
 public:
  IpcMapping() = default;
  IpcMapping(const IpcHandle& handle, int device, int pe, int owner_pe);
  IpcMapping(IpcMapping&& o) noexcept;
  IpcMapping& operator=(IpcMapping&& o) noexcept;
  IpcMapping(const IpcMapping&) = delete;
  IpcMapping& operator=(const IpcMapping&) = delete;
  ~IpcMapping();
  char* get() const { return ptr_; }

 private:
  char* ptr_ = nullptr;
  int device_ = 0;
};

// Pinned host memory mapped into the device (hipHostMalloc, mapped | portable), zeroed.
class PinnedMapped {
 public:
  PinnedMapped() = default;
  PinnedMapped(std::size_t bytes, int device, int pe);
  PinnedMapped(PinnedMapped&& o) noexcept;
  PinnedMapped& operator=(PinnedMapped&& o) noexcept;
  PinnedMapped(const PinnedMapped&) = delete;
  PinnedMapped& operator=(const PinnedMapped&) = delete;
  ~PinnedMapped();
  void* host() const { return host_; }
  void* device() const { return device_ptr_; }

 private:
  void* host_ = nullptr;
  void* device_ptr_ = nullptr;
};

}  // namespace tessera::detail::hip
