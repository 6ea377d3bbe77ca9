#include <cuda_runtime.h>

#include <string>
#include <vector>

#include "gpu_limit.hpp"
#include "tessera/error.hpp"

namespace tessera::bench::gpu {
namespace {

void check(cudaError_t result, const char* what, int pe) {
  if (result == cudaSuccess) return;
  (void)cudaGetLastError();
  throw Error(
      ErrorCode::backend, pe,
      std::string("tessera-bench limit: ") + what + " failed: " + cudaGetErrorString(result));
}

// Frees what the measurement allocated, also when a CUDA call throws half-way.
struct Resources {
  void* src = nullptr;
  void* dst = nullptr;
  cudaStream_t stream = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
  ~Resources() {
    if (start != nullptr) (void)cudaEventDestroy(start);
    if (stop != nullptr) (void)cudaEventDestroy(stop);
    if (stream != nullptr) (void)cudaStreamDestroy(stream);
    if (src != nullptr) (void)cudaFree(src);
    if (dst != nullptr) (void)cudaFree(dst);
  }
};

}  // namespace

std::vector<double> memcpy_d2d_times(int pe, int device, std::size_t bytes, int rounds) {
  check(cudaSetDevice(device), "cudaSetDevice", pe);
  Resources r;
  const std::size_t alloc = bytes == 0 ? 1 : bytes;
  check(cudaMalloc(&r.src, alloc), "cudaMalloc", pe);
  check(cudaMalloc(&r.dst, alloc), "cudaMalloc", pe);
  check(cudaMemset(r.src, 0x5a, alloc), "cudaMemset", pe);
  check(cudaMemset(r.dst, 0, alloc), "cudaMemset", pe);
  check(cudaStreamCreateWithFlags(&r.stream, cudaStreamNonBlocking), "cudaStreamCreate", pe);
  check(cudaEventCreate(&r.start), "cudaEventCreate", pe);
  check(cudaEventCreate(&r.stop), "cudaEventCreate", pe);
  std::vector<double> times;
  times.reserve(static_cast<std::size_t>(rounds));
  for (int i = 0; i < rounds; ++i) {
    check(cudaEventRecord(r.start, r.stream), "cudaEventRecord", pe);
    check(cudaMemcpyAsync(r.dst, r.src, bytes, cudaMemcpyDeviceToDevice, r.stream),
          "cudaMemcpyAsync", pe);
    check(cudaEventRecord(r.stop, r.stream), "cudaEventRecord", pe);
    check(cudaEventSynchronize(r.stop), "cudaEventSynchronize", pe);
    float ms = 0.0f;
    check(cudaEventElapsedTime(&ms, r.start, r.stop), "cudaEventElapsedTime", pe);
    times.push_back(static_cast<double>(ms) * 1e3);
  }
  return times;
}

}  // namespace tessera::bench::gpu
