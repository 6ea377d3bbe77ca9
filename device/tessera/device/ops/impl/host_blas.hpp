// The BLAS the host backend's tile GEMM hands its tiles to (defined in src/ops/host_blas.cpp, the
// one file that talks to a BLAS's C API). The library is loaded at run time on first use, so a
// build or a machine without a BLAS still works: gemm_tile then runs its own portable kernel.
//
// TESSERA_BLAS chooses, read once per process on first use:
//   unset, "" or "auto"  BLIS, else OpenBLAS, else none (the portable kernel), silently; a BLIS
//                        running its generic configuration only when OpenBLAS is missing
//                        (OpenBLAS's calls are serialized: concurrent ones gave wrong results);
//   "openblas", "blis"   that library (its serial build first, then the default one);
//   "none"               the portable kernel;
//   a path (has a '/')   that shared object, which must export cblas_sgemm.
// A named library that cannot be loaded is logged once as a warning and the portable kernel runs.
// Every call runs single-threaded in the caller's thread (the library's own threads are set to
// 1): the host backend already runs one thread per block, and the BLAS must not add more.
#pragma once

#include <cstddef>
#include <string>

#include "tessera/device/numeric.hpp"

namespace tessera::device::host_blas {

// What a request resolved to. `name` says which library ("OpenBLAS 0.3.21 ... (serial)", "BLIS
// 0.9.0 (serial)", or "none"); `status` why: empty when loaded, else the cause.
struct Info {
  bool available = false;
  bool has_sbgemm = false;  // the library multiplies bf16 itself (cblas_sbgemm)
  std::string name = "none";
  std::string status;
};

// The process's BLAS (TESSERA_BLAS at first call); thread-safe, loads at most once.
const Info& info();

// Resolves `request` (TESSERA_BLAS's syntax) into a freshly loaded library's Info without
// touching the process's choice: for tests and `tessera-bench gemm`'s report.
Info probe(const std::string& request);

// True for the Info name of a BLIS running its generic configuration (no kernels for this CPU):
// TESSERA_BLAS=auto then takes OpenBLAS instead when it is installed.
bool runs_generic_blis(const std::string& name);

// Row-major C = A * B (accumulate = false) or C += A * B, A m x k (lda), B k x n (ldb), C m x n
// (ldc), through the process's BLAS, run in the calling thread. Returns false, touching nothing,
// when no BLAS is loaded or a dimension exceeds the BLAS's int; the caller then computes itself.
bool sgemm(std::size_t m, std::size_t n, std::size_t k, const float* a, std::size_t lda,
           const float* b, std::size_t ldb, float* c, std::size_t ldc, bool accumulate);

// The same with bf16 inputs and fp32 accumulation, through cblas_sbgemm. Returns false when the
// library has no sbgemm (Debian's OpenBLAS 0.3.21 and BLIS 0.9 have none): the caller widens.
bool sbgemm(std::size_t m, std::size_t n, std::size_t k, const bf16* a, std::size_t lda,
            const bf16* b, std::size_t ldb, float* c, std::size_t ldc, bool accumulate);

}  // namespace tessera::device::host_blas
