// The GPU backends' entry points, one set per GPU runtime: src/gpu/gpu_backend.cpp compiled with
// TESSERA_GPU_CUDA defines cuda::, with TESSERA_GPU_HIP hip::; src/gpu/gpu_disabled.cpp defines
// them for a runtime the build lacks. Internal.
#pragma once

#include <memory>

#include "gpu/gpu_checks.hpp"
#include "runtime/backend_selection.hpp"

namespace tessera::detail {
namespace cuda {
// What this process sees of CUDA; never throws.
GpuProbe probe();
// The cuda backend over `devices` visible devices (probe().devices > 0).
std::unique_ptr<ExecutionBackend> make_backend(int devices);
// Every fact tessera-info --gpu reports, gathered without making a heap; never throws.
GpuPreflight preflight();
}  // namespace cuda
namespace hip {
GpuProbe probe();
std::unique_ptr<ExecutionBackend> make_backend(int devices);
GpuPreflight preflight();
}  // namespace hip
}  // namespace tessera::detail
