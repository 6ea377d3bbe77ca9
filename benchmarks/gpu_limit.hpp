// The physical limits of the GPU benchmarks: the CUDA runtime's own copy, timed by CUDA events.
// gpu_limit.cu is the only file of the benchmarks that includes CUDA headers; builds without
// CUDA link gpu_limit_disabled.cpp, whose functions throw.
#pragma once

#include <cstddef>
#include <vector>

namespace tessera::bench::gpu {

// Microseconds of each of `rounds` cudaMemcpyAsync device-to-device copies of `bytes` between two
// private cudaMalloc buffers on `device`, each timed alone with a pair of CUDA events. Throws
// tessera::Error(backend) naming `pe` on a CUDA failure, or when this build has no CUDA.
std::vector<double> memcpy_d2d_times(int pe, int device, std::size_t bytes, int rounds);

}  // namespace tessera::bench::gpu
