// The tensor-core MMA of the platform layer: warp-level 16 x 16 x 16 tiles, fp32 accumulation.
//
// kHasTensorCoreMma says whether this compiler pass has them: CUDA's device pass for sm_80 and
// newer (nvcuda::wmma). Everywhere else (host, HIP, older GPUs) it is false and the functions are
// stand-ins that end the kernel with a failure, so portable code calls them only under
// `if constexpr (platform::kHasTensorCoreMma)`. All 32 lanes of a warp call each function
// together. Pointers given to mma_16x16x16 and mma_store are 32-byte aligned, in shared or
// global memory; leading dimensions (in elements) are multiples of 8 for the 16-bit inputs and
// of 4 for the fp32 result. block_shared<T>() is one T per block in shared memory, the staging
// area for those loads.
#pragma once

#include <type_traits>

#include "tessera/device/failure.hpp"
#include "tessera/device/platform/cuda.hpp"
#include "tessera/device/platform/hip.hpp"
#include "tessera/device/platform/host.hpp"
#include "tessera/device/platform/macros.hpp"

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <mma.h>

namespace tessera::device::platform {

inline constexpr bool kHasTensorCoreMma = true;

// The input element type of an MMA: the bits of an IEEE half or a bfloat16.
enum class MmaInput { f16, bf16 };

// A warp's 16 x 16 fp32 accumulator tile, spread over its lanes' registers.
struct MmaAccumulator {
  nvcuda::wmma::fragment<nvcuda::wmma::accumulator, 16, 16, 16, float> frag;
};

__device__ inline void mma_zero(MmaAccumulator& acc) {
  nvcuda::wmma::fill_fragment(acc.frag, 0.0f);
}

// acc += A * B, A and B 16 x 16 row-major (leading dimensions lda and ldb, in elements).
template <MmaInput kIn>
__device__ inline void mma_16x16x16(MmaAccumulator& acc, const void* a, unsigned lda, const void* b,
                                    unsigned ldb) {
  using E = std::conditional_t<kIn == MmaInput::bf16, __nv_bfloat16, __half>;
  namespace wmma = nvcuda::wmma;
  wmma::fragment<wmma::matrix_a, 16, 16, 16, E, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, E, wmma::row_major> fb;
  wmma::load_matrix_sync(fa, static_cast<const E*>(a), lda);
  wmma::load_matrix_sync(fb, static_cast<const E*>(b), ldb);
  wmma::mma_sync(acc.frag, fa, fb, acc.frag);
}

// Writes the accumulator row-major to c (leading dimension ldc, in elements).
__device__ inline void mma_store(float* c, unsigned ldc, const MmaAccumulator& acc) {
  nvcuda::wmma::store_matrix_sync(c, acc.frag, ldc, nvcuda::wmma::mem_row_major);
}

template <class T>
__device__ inline T* block_shared() {
  __shared__ __align__(128) unsigned char storage[sizeof(T)];
  return reinterpret_cast<T*>(storage);
}

}  // namespace tessera::device::platform
#else
namespace tessera::device::platform {

inline constexpr bool kHasTensorCoreMma = false;
enum class MmaInput { f16, bf16 };
struct MmaAccumulator {};

TESSERA_KERNEL_CODE inline void mma_zero(MmaAccumulator&) {}

template <MmaInput kIn>
TESSERA_NORETURN TESSERA_KERNEL_CODE inline void mma_16x16x16(MmaAccumulator&, const void*,
                                                              unsigned, const void*, unsigned) {
  report_failure(FailureCode::invalid_argument, "tensor-core MMA called where there is none");
}

TESSERA_NORETURN TESSERA_KERNEL_CODE inline void mma_store(float*, unsigned,
                                                           const MmaAccumulator&) {
  report_failure(FailureCode::invalid_argument, "tensor-core MMA called where there is none");
}

template <class T>
TESSERA_NORETURN TESSERA_KERNEL_CODE inline T* block_shared() {
  report_failure(FailureCode::invalid_argument, "block_shared called where there is none");
}

}  // namespace tessera::device::platform
#endif
