// The CUDA <-> HIP name map: the one place that knows which GPU runtime a translation unit is
// written against, so the launch glue (gpu_launch.hpp) and the GPU backend's host code
// (src/gpu/) are written once. Selected by the compiler (nvcc: CUDA, hipcc: HIP) or, for host
// compilers building a backend's wrapper, by TESSERA_GPU_CUDA / TESSERA_GPU_HIP. A translation
// unit that is neither includes nothing and gets TESSERA_GPU_RUNTIME == 0.
//
// TESSERA_GPU(Name) is the runtime's `cudaName` / `hipName` for every name that is spelled the
// same after the prefix in both APIs (Malloc, StreamSynchronize, Error_t, Success, ...). The few
// that differ have their own entry below, named for what they mean. Internal.
#pragma once

#if defined(__CUDACC__) || defined(TESSERA_GPU_CUDA)
#if defined(__CUDACC__)
#include <cuda_runtime.h>
#else
#include <cuda_runtime_api.h>
#endif
#define TESSERA_GPU_RUNTIME 1
#define TESSERA_GPU_NS cuda
#define TESSERA_GPU_NAME_STRING "CUDA"
#define TESSERA_GPU(name) cuda##name
#define TESSERA_GPU_ERROR_OUT_OF_MEMORY cudaErrorMemoryAllocation
#define TESSERA_GPU_DEVICE_ATTR cudaDeviceAttr
#define TESSERA_GPU_ATTR_COOPERATIVE_LAUNCH cudaDevAttrCooperativeLaunch
#define TESSERA_GPU_ATTR_HOST_NATIVE_ATOMICS cudaDevAttrHostNativeAtomicSupported
#define TESSERA_GPU_ATTR_COMPUTE_MODE cudaDevAttrComputeMode
#define TESSERA_GPU_ATTR_MULTIPROCESSORS cudaDevAttrMultiProcessorCount
#define TESSERA_GPU_ATTR_CONCURRENT_MANAGED cudaDevAttrConcurrentManagedAccess
// CUDA only: GPUDirect RDMA (nvidia_p2p_get_pages); HIP has no such attribute, so it is not
// defined there.
#define TESSERA_GPU_ATTR_GPUDIRECT_RDMA cudaDevAttrGPUDirectRDMASupported

#elif defined(__HIPCC__) || defined(__HIP__) || defined(TESSERA_GPU_HIP)
#if defined(__HIPCC__) || defined(__HIP__)
#include <hip/hip_runtime.h>
#else
#include <hip/hip_runtime_api.h>
#endif
#define TESSERA_GPU_RUNTIME 2
#define TESSERA_GPU_NS hip
#define TESSERA_GPU_NAME_STRING "HIP"
#define TESSERA_GPU(name) hip##name
#define TESSERA_GPU_ERROR_OUT_OF_MEMORY hipErrorOutOfMemory
#define TESSERA_GPU_DEVICE_ATTR hipDeviceAttribute_t
#define TESSERA_GPU_ATTR_COOPERATIVE_LAUNCH hipDeviceAttributeCooperativeLaunch
#define TESSERA_GPU_ATTR_HOST_NATIVE_ATOMICS hipDeviceAttributeHostNativeAtomicSupported
#define TESSERA_GPU_ATTR_COMPUTE_MODE hipDeviceAttributeComputeMode
#define TESSERA_GPU_ATTR_MULTIPROCESSORS hipDeviceAttributeMultiprocessorCount
#define TESSERA_GPU_ATTR_CONCURRENT_MANAGED hipDeviceAttributeConcurrentManagedAccess
// HIP only: the rate (kHz) of the wall clock platform/hip.hpp's clock_ns() reads. ROCm 6 has the
// attribute (5.2, Debian's, does not: there the 100 MHz of gfx90a/gfx94x is assumed).
#if defined(HIP_VERSION_MAJOR) && HIP_VERSION_MAJOR >= 6
#define TESSERA_GPU_ATTR_WALL_CLOCK_KHZ hipDeviceAttributeWallClockRate
#endif

#else
#define TESSERA_GPU_RUNTIME 0
#endif

#if TESSERA_GPU_RUNTIME != 0
#include <cstddef>
#include <cstring>

namespace tessera::detail::TESSERA_GPU_NS {

// Device memory for the symmetric heap. On HIP fine-grained (hipDeviceMallocFinegrained):
// coarse-grained memory is coherent only at kernel boundaries, so system-scope atomics and
// signals from a peer GPU or the proxy thread would not be seen during a kernel. cudaMalloc'd
// memory needs no flag for that.
inline TESSERA_GPU(Error_t) malloc_heap_memory(void** ptr, std::size_t bytes) {
#if TESSERA_GPU_RUNTIME == 1
  return cudaMalloc(ptr, bytes);
#else
  return hipExtMallocWithFlags(ptr, bytes, hipDeviceMallocFinegrained);
#endif
}

// Pinned host memory mapped into every device's address space (portable). On HIP explicitly
// coherent (hipHostMallocCoherent): the proxy ring and the tables the host writes while kernels
// run must not be cached non-coherently by the GPU. CUDA's mapped pinned memory is always so.
inline TESSERA_GPU(Error_t) malloc_mapped_host(void** ptr, std::size_t bytes) {
#if TESSERA_GPU_RUNTIME == 1
  return cudaHostAlloc(ptr, bytes, cudaHostAllocMapped | cudaHostAllocPortable);
#else
  return hipHostMalloc(ptr, bytes,
                       hipHostMallocMapped | hipHostMallocPortable | hipHostMallocCoherent);
#endif
}
inline TESSERA_GPU(Error_t) free_mapped_host(void* ptr) {
#if TESSERA_GPU_RUNTIME == 1
  return cudaFreeHost(ptr);
#else
  return hipHostFree(ptr);
#endif
}

// The 16 bytes of the device's UUID (stable across processes, unlike ordinals under
// CUDA_VISIBLE_DEVICES / HIP_VISIBLE_DEVICES).
inline TESSERA_GPU(Error_t) device_uuid_bytes(int device, unsigned char (&out)[16]) {
#if TESSERA_GPU_RUNTIME == 1
  cudaDeviceProp prop{};
  const cudaError_t result = cudaGetDeviceProperties(&prop, device);
  if (result == cudaSuccess) std::memcpy(out, prop.uuid.bytes, sizeof(out));
  return result;
#else
  hipDevice_t handle{};
  hipError_t result = hipDeviceGet(&handle, device);
  if (result != hipSuccess) return result;
  hipUUID uuid{};
  result = hipDeviceGetUuid(&uuid, handle);
  if (result == hipSuccess) std::memcpy(out, uuid.bytes, sizeof(out));
  return result;
#endif
}

// Managed memory of `bytes` that the driver keeps as read-only copies on every processor reading
// it (ReadMostly), prefetched to `device`: kernels read it from device memory, host code from a
// host copy; a host write invalidates the copies, which the next reads re-create.
inline TESSERA_GPU(Error_t)
    malloc_read_mostly(void** ptr, std::size_t bytes, int device, TESSERA_GPU(Stream_t) stream) {
  TESSERA_GPU(Error_t)
  result = TESSERA_GPU(MallocManaged)(ptr, bytes, TESSERA_GPU(MemAttachGlobal));
  if (result != TESSERA_GPU(Success)) return result;
#if TESSERA_GPU_RUNTIME == 1 && CUDART_VERSION >= 13000
  cudaMemLocation where{};
  where.type = cudaMemLocationTypeDevice;
  where.id = device;
  result = cudaMemAdvise(*ptr, bytes, cudaMemAdviseSetReadMostly, where);
  if (result == cudaSuccess) result = cudaMemPrefetchAsync(*ptr, bytes, where, 0, stream);
#else
  result = TESSERA_GPU(MemAdvise)(*ptr, bytes, TESSERA_GPU(MemAdviseSetReadMostly), device);
  if (result == TESSERA_GPU(Success)) {
    result = TESSERA_GPU(MemPrefetchAsync)(*ptr, bytes, device, stream);
  }
#endif
  if (result == TESSERA_GPU(Success)) result = TESSERA_GPU(StreamSynchronize)(stream);
  if (result != TESSERA_GPU(Success)) {
    (void)TESSERA_GPU(Free)(*ptr);
    *ptr = nullptr;
  }
  return result;
}

// A version the runtime reported, as 1000 * major + 10 * minor (CUDA's own encoding; HIP
// reports major * 10000000 + minor * 100000 + patch).
inline int normalized_version(int reported) {
#if TESSERA_GPU_RUNTIME == 1
  return reported;
#else
  return reported / 10000000 * 1000 + reported / 100000 % 100 * 10;
#endif
}

// The oldest runtime this code is written for: CUDA 12.5 (cudaGetDriverEntryPointByVersion),
// ROCm's HIP 5.2.
inline constexpr int kMinimumRuntimeVersion = TESSERA_GPU_RUNTIME == 1 ? 12050 : 5020;

// The device's marketing name, at most `bytes` - 1 characters.
inline TESSERA_GPU(Error_t) device_name(int device, char* out, int bytes) {
#if TESSERA_GPU_RUNTIME == 1
  cudaDeviceProp prop{};
  const cudaError_t result = cudaGetDeviceProperties(&prop, device);
  if (result == cudaSuccess) {
    std::size_t n = strnlen(prop.name, sizeof(prop.name));
    if (n > static_cast<std::size_t>(bytes) - 1) n = static_cast<std::size_t>(bytes) - 1;
    std::memcpy(out, prop.name, n);
    out[n] = '\0';
  }
  return result;
#else
  return hipDeviceGetName(out, bytes, device);
#endif
}

}  // namespace tessera::detail::TESSERA_GPU_NS
#endif
