// The CUDA runtime API calls the heap and streams need, behind RAII handles. With
// cuda_driver.cpp, the only code that includes CUDA headers (besides the .cu launch glue).
// Every failure becomes Error(backend, pe, "<call> failed: <cudaGetErrorString>"). Internal;
// built only with TESSERA_HAVE_CUDA.
#pragma once

#include <array>
#include <cstddef>

namespace tessera::detail::cuda {

using Uuid = std::array<unsigned char, 16>;
using IpcHandle = std::array<char, 64>;  // cudaIpcMemHandle_t's bytes

// Makes `device` current on the calling thread.
void set_device(int device, int pe);
// The device's UUID (stable across processes, unlike ordinals under CUDA_VISIBLE_DEVICES).
Uuid device_uuid(int device, int pe);
// The ordinal of the visible device with this UUID, or -1.
int device_with_uuid(const Uuid& uuid);
// True when kernels on `device` may load/store memory of `peer_device` (same device: true).
bool can_access_peer(int device, int peer_device);

// Synchronous copies and fills of device (or any UVA) memory, with `device` current.
void copy(void* dst, const void* src, std::size_t bytes, int device, int pe);
void zero(void* dst, std::size_t bytes, int device, int pe);

// cudaMalloc'd memory, freed on destruction.
class DeviceMemory {
 public:
  DeviceMemory() = default;
  DeviceMemory(std::size_t bytes, int device, int pe);
  DeviceMemory(DeviceMemory&& o) noexcept;
  DeviceMemory& operator=(DeviceMemory&& o) noexcept;
  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;
  ~DeviceMemory();
  char* get() const { return ptr_; }
  // The legacy IPC handle of this allocation (cudaIpcGetMemHandle).
  IpcHandle ipc_handle() const;

 private:
  char* ptr_ = nullptr;
  int device_ = 0;
  int pe_ = -1;
};

// A peer's cudaMalloc'd memory opened through its IPC handle; closed on destruction.
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

// Pinned host memory mapped into the device (cudaHostAllocMapped | Portable), zeroed.
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

}  // namespace tessera::detail::cuda
