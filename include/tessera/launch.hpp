// tessera::launch: runs a kernel as a grid of blocks on a Stream. On the host backend every
// block gets its own thread and all blocks run at once, so blocks may wait for each other
// (producer/consumer, specialised blocks) without deadlock. On the cuda backend, from a file
// compiled by nvcc, the grid is a cooperative launch on the native stream (detail/gpu_launch.hpp).
#pragma once

#include <string>
#include <utility>

#include "tessera/detail/gpu_launch.hpp"
#include "tessera/device/group.hpp"
#include "tessera/error.hpp"
#include "tessera/stream.hpp"

namespace tessera {

// Enqueues kernel(device::Block(b, grid), args...) for b in [0, grid) on `stream`. The kernel
// and its arguments are copied (kernels take device handles, tiles and pointers by value); the
// call returns at once, and stream.synchronize() waits for the grid and reports its failures.
template <class Kernel, class... Args>
void launch(Stream& stream, int grid, Kernel kernel, Args... args) {
  if (grid <= 0) {
    throw Error(ErrorCode::invalid_argument, stream.pe(),
                "launch: grid must be at least 1 block, got " + std::to_string(grid));
  }
  // A GPU backend's stream: the grid becomes a cooperative launch. gpu_launch throws "compile
  // with nvcc or hipcc" when the caller was compiled by a host compiler.
  if (stream.native_handle() != nullptr) {
    detail::gpu_launch(stream, grid, kernel, args...);
    return;
  }
  stream.enqueue_grid(grid, [kernel = std::move(kernel), args...](device::Block block) {
    Kernel k = kernel;  // each block runs its own copy, so a kernel may keep per-block state
    k(block, args...);
  });
}

}  // namespace tessera
