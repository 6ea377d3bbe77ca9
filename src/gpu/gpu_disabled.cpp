// A GPU backend's entry points in a build without its runtime (compiled with TESSERA_GPU_OFF_CUDA
// or TESSERA_GPU_OFF_HIP): nothing is visible, and the probe says how to get it.
#include <string>

#include "gpu/gpu_backend.hpp"
#include "tessera/error.hpp"

#if !defined(TESSERA_GPU_OFF_CUDA) && !defined(TESSERA_GPU_OFF_HIP)
#error "compile gpu_disabled.cpp with TESSERA_GPU_OFF_CUDA or TESSERA_GPU_OFF_HIP"
#endif

#if defined(TESSERA_GPU_OFF_CUDA)
#define TESSERA_GPU_OFF_NS cuda
#define TESSERA_GPU_OFF_API "CUDA"
#define TESSERA_GPU_OFF_WHY                                                                  \
  "this build of Tessera has no CUDA backend (TESSERA_ENABLE_CUDA was off or nvcc was "      \
  "not found at configure time; configure with -DTESSERA_ENABLE_CUDA=ON and a CUDA >= 12.5 " \
  "toolkit)"
#else
#define TESSERA_GPU_OFF_NS hip
#define TESSERA_GPU_OFF_API "HIP"
#define TESSERA_GPU_OFF_WHY                                                                   \
  "this build of Tessera has no HIP backend (TESSERA_ENABLE_HIP was off or ROCm's HIP "       \
  "runtime was not found at configure time; configure with -DTESSERA_ENABLE_HIP=ON and ROCm " \
  ">= 5.2: hipcc, libamdhip64-dev)"
#endif

namespace tessera::detail::TESSERA_GPU_OFF_NS {

GpuProbe probe() {
  GpuProbe p;
  p.why_none = TESSERA_GPU_OFF_WHY;
  return p;
}

std::unique_ptr<ExecutionBackend> make_backend(int) {
  throw Error(ErrorCode::backend, -1, TESSERA_GPU_OFF_WHY);
}

GpuPreflight preflight() {
  GpuPreflight p;
  p.api = TESSERA_GPU_OFF_API;
  p.probe = probe();
  return p;
}

}  // namespace tessera::detail::TESSERA_GPU_OFF_NS
