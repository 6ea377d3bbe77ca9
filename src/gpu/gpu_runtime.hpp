// The GPU runtime API calls the heap, streams and checks need, behind RAII handles, written once
// over the CUDA <-> HIP name map (tessera/detail/gpu_names.hpp) and compiled once per backend:
// with TESSERA_GPU_CUDA into tessera::detail::cuda, with TESSERA_GPU_HIP into
// tessera::detail::hip. With cuda_driver.cpp (the CUDA-only VMM path) the only code that includes
// a GPU runtime's header besides the device headers and the launch glue. Every failure becomes
// Error(backend, pe, "<call> failed: <error string>"). Internal.
#pragma once

#include <array>
#include <cstddef>
#include <memory>
#include <string>

#include "gpu/gpu_checks.hpp"
#include "launch/native_stream.hpp"
#include "tessera/detail/gpu_names.hpp"

#if TESSERA_GPU_RUNTIME == 0
#error "src/gpu/gpu_runtime.hpp needs TESSERA_GPU_CUDA or TESSERA_GPU_HIP"
#endif

namespace tessera::detail::TESSERA_GPU_NS {

using Uuid = std::array<unsigned char, 16>;
using IpcHandle = std::array<char, 64>;  // the runtime's IpcMemHandle_t bytes

// Throws Error(backend, or out_of_memory) naming `call` and `pe` unless `result` is success.
void check(TESSERA_GPU(Error_t) result, const std::string& call, int pe);

// Makes `device` current on the calling thread.
void set_device(int device, int pe);
Uuid device_uuid(int device, int pe);
// The ordinal of the visible device with this UUID, or -1.
int device_with_uuid(const Uuid& uuid);
// True when kernels on `device` may load/store memory of `peer_device` (same device: true).
bool can_access_peer(int device, int peer_device);
// True when atomics of kernels on `device` on `peer_device`'s memory are native over their link
// (P2PAttrNativeAtomicSupported); same device: true.
bool native_peer_atomics(int device, int peer_device);
// A device attribute, or `fallback` when the query fails.
int device_attribute(TESSERA_GPU_DEVICE_ATTR attribute, int device, int fallback);

// A non-blocking stream on a device, destroyed (after draining) on destruction. Host copies of
// the heap run on one of their own (copy_sync, zero_sync), so they neither wait for nor are
// reordered by the PE's kernels, and return only once the bytes landed.
class GpuStream final : public NativeStream {
 public:
  GpuStream(int device, int pe);
  ~GpuStream() override;
  GpuStream(const GpuStream&) = delete;
  GpuStream& operator=(const GpuStream&) = delete;
  void* handle() const override { return stream_; }
  TESSERA_GPU(Stream_t) native() const { return stream_; }
  int device() const override { return device_; }
  void synchronize() override;
  void begin_capture() override;
  std::unique_ptr<NativeGraph> end_capture() override;
  // cudaMemcpyAsync / hipMemcpyAsync on this stream, then a wait for this stream: complete on
  // return, pageable memory included.
  void copy_sync(void* dst, const void* src, std::size_t bytes);
  // MemsetAsync(0) on this stream, then a wait for this stream (not for the whole device: that
  // would wait for other PEs' kernels sharing the GPU).
  void zero_sync(void* dst, std::size_t bytes);

 private:
  TESSERA_GPU(Stream_t) stream_ = nullptr;
  int device_;
  int pe_;
};

// The heap's device memory (gpu_names.hpp's malloc_heap_memory), freed on destruction.
class HeapMemory {
 public:
  HeapMemory() = default;
  HeapMemory(std::size_t bytes, int device, int pe);
  HeapMemory(HeapMemory&& o) noexcept;
  HeapMemory& operator=(HeapMemory&& o) noexcept;
  HeapMemory(const HeapMemory&) = delete;
  HeapMemory& operator=(const HeapMemory&) = delete;
  ~HeapMemory();
  char* get() const { return ptr_; }
  IpcHandle ipc_handle() const;

 private:
  void reset() noexcept;
  char* ptr_ = nullptr;
  int device_ = 0;
  int pe_ = -1;
};

// A peer's HeapMemory opened through its IPC handle; closed on destruction.
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
  void reset() noexcept;
  char* ptr_ = nullptr;
  int device_ = 0;
};

// Pinned host memory mapped into the device (gpu_names.hpp's malloc_mapped_host), zeroed.
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

// The peer-base table (Context::peer_base), which kernels read on every translate, put and
// signal and host code reads too. On a device with concurrent managed access: managed memory
// advised ReadMostly and prefetched to the device, so kernels read it from device memory and the
// host from its own copy. Elsewhere: pinned host memory mapped into the device (read across the
// bus). Either way one address serves host and device. Written by the host only while no kernel
// runs (init, teardown).
class PeerTable {
 public:
  PeerTable() = default;
  PeerTable(std::size_t bytes, int device, int pe, GpuStream& stream);
  PeerTable(PeerTable&& o) noexcept;
  PeerTable& operator=(PeerTable&& o) noexcept;
  PeerTable(const PeerTable&) = delete;
  PeerTable& operator=(const PeerTable&) = delete;
  ~PeerTable();
  void* get() const { return managed_ != nullptr ? managed_ : pinned_.host(); }
  bool in_device_memory() const { return managed_ != nullptr; }

 private:
  void reset() noexcept;
  void* managed_ = nullptr;
  PinnedMapped pinned_;
};

}  // namespace tessera::detail::TESSERA_GPU_NS
