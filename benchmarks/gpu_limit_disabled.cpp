// Stand-in for gpu_limit.cu in builds without CUDA.
#include "gpu_limit.hpp"
#include "tessera/error.hpp"

namespace tessera::bench::gpu {

std::vector<double> memcpy_d2d_times(int pe, int, std::size_t, int) {
  throw Error(ErrorCode::backend, pe, "tessera-bench: this build has no CUDA backend");
}

}  // namespace tessera::bench::gpu
