// The GPU half of tessera::launch, written once over the CUDA <-> HIP name map (gpu_names.hpp).
// A translation unit compiled by nvcc or hipcc gets the __global__ entry point and a cooperative
// launch on the stream's native stream; one compiled by a host compiler gets a stand-in that
// says how to fix the build, since its kernel has no GPU code.
#pragma once

#include <string>

#include "tessera/device/group.hpp"
#include "tessera/error.hpp"
#include "tessera/stream.hpp"

namespace tessera::detail {

// Threads per block of a GPU launch. Kernels split work with group-stride loops, so any width
// is correct; 256 (eight 32-lane warps, four 64-lane wavefronts) keeps several blocks resident
// per SM / compute unit.
inline constexpr int kGpuBlockThreads = 256;

}  // namespace tessera::detail

#if defined(__CUDACC__) || defined(__HIPCC__) || defined(__HIP__)
#include <typeinfo>

#include "tessera/detail/gpu_kernel_record.hpp"
#include "tessera/detail/gpu_names.hpp"

namespace tessera::detail {

// One block of a grid: the kernel object called as it would be on the host executor.
template <class Kernel, class... Args>
__global__ void kernel_entry(Kernel kernel, Args... args) {
  kernel(device::Block(static_cast<int>(blockIdx.x), static_cast<int>(gridDim.x)), args...);
}

// Records kernel_entry<Kernel, Args...> in the process's list of GPU kernels when the object
// that launches it is loaded (gpu_kernel_record.hpp: tessera-info --gpu reports how many blocks
// of each can be co-resident). gpu_launch names `recorded`, which makes every instantiation it
// launches define it, and so run this initialiser.
template <class Kernel, class... Args>
struct KernelEntryRecorded {
  static inline const bool recorded =
      (record_gpu_kernel(TESSERA_GPU_RUNTIME,
                         reinterpret_cast<const void*>(&kernel_entry<Kernel, Args...>),
                         typeid(Kernel).name()),
       true);
};

// Launches `grid` blocks of kernel_entry on the stream's native stream. Cooperative, so every
// block is resident at once (as on the host executor) and a grid too large for that fails here
// with invalid_argument instead of deadlocking blocks that wait for each other.
template <class Kernel, class... Args>
void gpu_launch(Stream& stream, int grid, Kernel& kernel, Args&... args) {
  static_cast<void>(KernelEntryRecorded<Kernel, Args...>::recorded);
  TESSERA_GPU(Error_t) result = TESSERA_GPU(SetDevice)(stream.native_device());
  if (result == TESSERA_GPU(Success)) {
    void* params[] = {static_cast<void*>(&kernel), static_cast<void*>(&args)...};
    result = TESSERA_GPU(LaunchCooperativeKernel)(
        reinterpret_cast<const void*>(&kernel_entry<Kernel, Args...>), dim3(grid),
        dim3(kGpuBlockThreads), params, 0,
        static_cast<TESSERA_GPU(Stream_t)>(stream.native_handle()));
  }
  if (result != TESSERA_GPU(Success)) {
    (void)TESSERA_GPU(GetLastError)();
    const bool too_large = result == TESSERA_GPU(ErrorCooperativeLaunchTooLarge);
    throw Error(too_large ? ErrorCode::invalid_argument : ErrorCode::backend, stream.pe(),
                "launch of " + std::to_string(grid) + " blocks x " +
                    std::to_string(kGpuBlockThreads) +
                    " threads failed: " + TESSERA_GPU(GetErrorString)(result) +
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
