// The GPU half of tessera::launch. Besides the platform layer (device/tessera/device/platform/),
// the one header that tests the toolchain: a translation unit compiled by nvcc gets the __global__
// entry point and a cooperative launch on the stream's native CUDA stream, one compiled by hipcc
// the same on its HIP stream; one compiled by a host compiler gets a stand-in that says how to fix
// the build, since its kernel has no GPU code.
#pragma once

#include <string>

#include "tessera/device/group.hpp"
#include "tessera/error.hpp"
#include "tessera/stream.hpp"

#if defined(__CUDACC__)
#include <cuda_runtime.h>

namespace tessera::detail {

// Threads per block of a GPU launch. Kernels split work with group-stride loops, so any width
// is correct; 256 keeps several blocks per SM co-resident.
inline constexpr int kGpuBlockThreads = 256;

// One block of a grid: the kernel object called as it would be on the host executor.
template <class Kernel, class... Args>
__global__ void kernel_entry(Kernel kernel, Args... args) {
  kernel(device::Block(static_cast<int>(blockIdx.x), static_cast<int>(gridDim.x)), args...);
}

// Launches `grid` blocks of kernel_entry on the stream's CUDA stream. Cooperative, so every
// block is resident at once (as on the host executor) and a grid too large for that fails
// here instead of deadlocking blocks that wait for each other.
template <class Kernel, class... Args>
void gpu_launch(Stream& stream, int grid, Kernel& kernel, Args&... args) {
  cudaError_t result = cudaSetDevice(stream.native_device());
  if (result == cudaSuccess) {
    void* params[] = {static_cast<void*>(&kernel), static_cast<void*>(&args)...};
    result = cudaLaunchCooperativeKernel(
        reinterpret_cast<const void*>(&kernel_entry<Kernel, Args...>), dim3(grid),
        dim3(kGpuBlockThreads), params, 0, static_cast<cudaStream_t>(stream.native_handle()));
  }
  if (result != cudaSuccess) {
    (void)cudaGetLastError();
    throw Error(result == cudaErrorCooperativeLaunchTooLarge ? ErrorCode::invalid_argument
                                                             : ErrorCode::backend,
                stream.pe(),
                "launch of " + std::to_string(grid) + " blocks x " +
                    std::to_string(kGpuBlockThreads) +
                    " threads failed: " + cudaGetErrorString(result) +
                    (result == cudaErrorCooperativeLaunchTooLarge
                         ? " (all blocks must be resident at once; use fewer blocks)"
                         : ""));
  }
}

}  // namespace tessera::detail

#elif defined(__HIPCC__) || defined(__HIP__)
#include <hip/hip_runtime.h>

namespace tessera::detail {

// Threads per block of a GPU launch: four 64-lane wavefronts, so several blocks stay resident
// per compute unit.
inline constexpr int kGpuBlockThreads = 256;

// One block of a grid: the kernel object called as it would be on the host executor.
template <class Kernel, class... Args>
__global__ void kernel_entry(Kernel kernel, Args... args) {
  kernel(device::Block(static_cast<int>(blockIdx.x), static_cast<int>(gridDim.x)), args...);
}

// Launches `grid` blocks of kernel_entry on the stream's HIP stream, cooperatively (every block
// resident at once, as on the host executor); a grid too large for that fails here with
// invalid_argument instead of deadlocking blocks that wait for each other.
template <class Kernel, class... Args>
void gpu_launch(Stream& stream, int grid, Kernel& kernel, Args&... args) {
  hipError_t result = hipSetDevice(stream.native_device());
  if (result == hipSuccess) {
    void* params[] = {static_cast<void*>(&kernel), static_cast<void*>(&args)...};
    result = hipLaunchCooperativeKernel(
        reinterpret_cast<const void*>(&kernel_entry<Kernel, Args...>), dim3(grid),
        dim3(kGpuBlockThreads), params, 0, static_cast<hipStream_t>(stream.native_handle()));
  }
  if (result != hipSuccess) {
    (void)hipGetLastError();
    const bool too_large = result == hipErrorCooperativeLaunchTooLarge;
    throw Error(too_large ? ErrorCode::invalid_argument : ErrorCode::backend, stream.pe(),
                "launch of " + std::to_string(grid) + " blocks x " +
                    std::to_string(kGpuBlockThreads) +
                    " threads failed: " + hipGetErrorString(result) +
                    (too_large ? " (all blocks must be resident at once; use fewer blocks)" : ""));
  }
}

}  // namespace tessera::detail

#else

namespace tessera::detail {

template <class Kernel, class... Args>
[[noreturn]] void gpu_launch(Stream& stream, int, Kernel&, Args&...) {
  throw Error(ErrorCode::backend, stream.pe(),
              "launch: the stream belongs to a GPU backend (cuda or hip), but this kernel was "
              "compiled by a host compiler; compile the file that calls tessera::launch with nvcc "
              "(a .cu file) or hipcc, or run on the host backend (TESSERA_BACKEND=host)");
}

}  // namespace tessera::detail

#endif
