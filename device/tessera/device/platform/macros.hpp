// The macros every device header is written with, decided from the compiler's own predefined
// macros alone: this header includes nothing, so any header may include it first.
//
// Execution spaces. Two names with two meanings, although under nvcc and hipcc both expand to
// __host__ __device__ (and to nothing under a host compiler).
// - TESSERA_HOST_DEVICE: code for host and device alike. The vocabulary types and their members
//   (Tile, the groups, Context's accessors, Message) and pure helpers, which the runtime's host
//   code calls as freely as kernels do.
// - TESSERA_KERNEL_CODE: kernel-side code. The device API (put, signal, wait_until, ...), the ops'
//   building blocks and kernel bodies: it runs inside a kernel launch, on a GPU's threads or, on
//   the host backend, on the CPU worker threads that run the same kernel text; it takes a group
//   and a Context and is not meant to be called from host code outside a launch. It is __host__
//   too because the host backend's launcher calls kernel bodies from host code, in a .cu file as
//   well.
// Code that exists only in a GPU's device pass (platform/cuda.hpp, hip.hpp, gpu_copy.hpp and
// the tensor-core MMA) says so with a plain __device__.
//
// TESSERA_DEVICE_COMPILE is 1 in a GPU's device pass (nvcc's __CUDA_ARCH__ pass, hipcc's
// __HIP_DEVICE_COMPILE__ pass) and 0 in every host pass, the host backend's.
#pragma once

#if defined(__CUDACC__) || defined(__HIPCC__) || defined(__HIP__)
#define TESSERA_HOST_DEVICE __host__ __device__
#define TESSERA_KERNEL_CODE __host__ __device__
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
#define TESSERA_DEVICE_COMPILE 1
#else
#define TESSERA_DEVICE_COMPILE 0
#endif
#else
#define TESSERA_HOST_DEVICE
#define TESSERA_KERNEL_CODE
#define TESSERA_DEVICE_COMPILE 0
#endif

// [[noreturn]] for functions that end the calling device code (report_failure and the
// reporters built on it), except in hipcc's device pass: there a call to a noreturn function is
// followed by `unreachable`, and LLVM 15's AMDGPU backend cannot structure an `unreachable`
// inside lane-divergent control flow (`if (g.rank() == 0)` of a Warp or Block) and stops with
// "failed to annotate CFG". The HIP report_failure still never returns: it traps.
#if defined(__HIP_DEVICE_COMPILE__)
#define TESSERA_NORETURN
#else
#define TESSERA_NORETURN [[noreturn]]
#endif

// Marks the builders of failure diagnostics, which run at most once per kernel: on GPUs they
// stay out of line, so the dozens of checks a kernel inlines do not each inline a message.
#if defined(__CUDACC__) || defined(__HIPCC__) || defined(__HIP__)
#define TESSERA_COLD __attribute__((noinline, cold))
#else
#define TESSERA_COLD
#endif

// No-alias hint for pointer parameters of hot loops (every supported compiler spells it so).
#define TESSERA_RESTRICT __restrict__

// Keeps GCC's loop vectorizer (on at -O3) off a function: register-blocked GEMM micro-kernels
// are left to the basic-block (SLP) vectorizer, which keeps the accumulators in registers
// instead of vectorizing the k loop as many reductions that spill. Host code only.
#if defined(__GNUC__) && !defined(__clang__) && !TESSERA_DEVICE_COMPILE
#define TESSERA_NO_LOOP_VECTORIZE __attribute__((optimize("O2")))
#else
#define TESSERA_NO_LOOP_VECTORIZE
#endif
