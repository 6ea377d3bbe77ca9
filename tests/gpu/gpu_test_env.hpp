// Shared by the GPU test programs. Each program is one PE: ctest starts it as 2 or 4 processes
// under tessera-run with TESSERA_BACKEND=cuda (PEs sharing one GPU must be processes: IPC and
// VMM imports are between processes, and a one-GPU machine runs every PE on device 0). Every
// process runs the same tests in the same order, so their collective calls match.
#pragma once

#include <gtest/gtest.h>

#include "tessera/tessera.hpp"

namespace tessera::gpu_test {

// Skips the calling test, with the message ctest's SKIP_REGULAR_EXPRESSION matches, when this
// process sees no CUDA device (or the build has no CUDA backend).
#define TESSERA_SKIP_WITHOUT_CUDA()                                \
  do {                                                             \
    if (!::tessera::backend_available(::tessera::Backend::cuda)) { \
      GTEST_SKIP() << "no CUDA device visible";                    \
    }                                                              \
  } while (0)

// Options of a GPU test PE: the cuda backend, a small heap, the launcher's bootstrap.
inline Options gpu_options() {
  Options o = Options::from_env();
  o.backend = Backend::cuda;
  o.heap_size = std::size_t{64} << 20;
  o.timeout = std::chrono::milliseconds(30000);
  return o;
}

}  // namespace tessera::gpu_test
