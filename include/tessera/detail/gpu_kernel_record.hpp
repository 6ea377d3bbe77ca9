// The GPU kernels a process can launch through tessera::launch, recorded when the code holding
// them is loaded, so `tessera-info --gpu` can ask the runtime how many blocks of each are
// co-resident (the preflight of issue #18 item 3) without launching anything. gpu_launch.hpp
// records each kernel_entry instantiation it launches; the library's kernels are therefore
// recorded as soon as libtessera is loaded, and a user's as soon as their object is. Internal.
#pragma once

#include <string>
#include <vector>

namespace tessera::detail {

struct GpuKernelRecord {
  int runtime = 0;              // TESSERA_GPU_RUNTIME of the compiler: 1 CUDA, 2 HIP
  const void* entry = nullptr;  // the host-side handle of the __global__ function
  const char* type_name = "";   // typeid(Kernel).name(), mangled
};

// Records one kernel entry point; the same entry twice is kept once. Safe during static
// initialisation (the records live in a function-local object).
void record_gpu_kernel(int runtime, const void* entry, const char* type_name) noexcept;

// The kernels recorded for `runtime`, in the order they were first recorded.
std::vector<GpuKernelRecord> recorded_gpu_kernels(int runtime);

// A recorded kernel's type name for people: demangled, without the tessera:: and anonymous
// namespaces.
std::string kernel_display_name(const char* type_name);

}  // namespace tessera::detail
