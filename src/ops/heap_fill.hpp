// Host-side writes into this PE's heap that the op launchers need, correct on every backend: on
// a GPU backend the heap is device memory, which host code must not dereference.
#pragma once

#include <cstddef>
#include <vector>

#include "tessera/device/rma.hpp"
#include "tessera/device/tile.hpp"
#include "tessera/launch.hpp"
#include "tessera/runtime.hpp"

namespace tessera::detail {

// Zeroes `bytes` at `p` in this PE's heap; complete on return (a blocking copy through the
// backend's segment: memcpy on the host backend, cudaMemcpy on the cuda one). Not stream-ordered:
// call it before the kernels that use the memory are launched.
inline void zero_heap(Runtime& rt, void* p, std::size_t bytes) {
  if (p == nullptr || bytes == 0) return;
  const std::vector<unsigned char> zeros(bytes);
  rt.put(p, zeros.data(), bytes, rt.pe());
}

// Copies `bytes` from `src` to `dst` (either side in device memory on a GPU backend) as a kernel
// on `stream`, so the copy is ordered with the kernels around it. Each block copies a contiguous
// slice of 64-byte-aligned length; its threads interleave within the slice.
struct StreamCopyKernel {
  TESSERA_KERNEL_CODE void operator()(device::Block blk, unsigned char* dst,
                                      const unsigned char* src, std::size_t bytes) const {
    const auto blocks = static_cast<std::size_t>(blk.grid_size());
    std::size_t slice = (bytes + blocks - 1) / blocks;
    slice = (slice + 63) / 64 * 64;
    const std::size_t begin = static_cast<std::size_t>(blk.block_id()) * slice;
    if (begin >= bytes) return;
    const std::size_t len = bytes - begin < slice ? bytes - begin : slice;
    device::detail::copy_tile(blk, device::Tile<unsigned char>(dst + begin, 1, len),
                              device::Tile<const unsigned char>(src + begin, 1, len));
  }
};

// Enqueues the copy of `bytes` from `src` to `dst` on `stream`: one block on the host backend
// (memcpy on one worker), enough blocks on a GPU to spread a large copy over its SMs.
inline void copy_on_stream(Stream& stream, void* dst, const void* src, std::size_t bytes) {
  if (bytes == 0) return;
  constexpr std::size_t kBytesPerGpuBlock = std::size_t{1} << 20;
  int grid = 1;
  if (stream.native_handle() != nullptr) {
    const std::size_t want = (bytes + kBytesPerGpuBlock - 1) / kBytesPerGpuBlock;
    grid = want < 32 ? static_cast<int>(want) : 32;
  }
  launch(stream, grid, StreamCopyKernel{}, static_cast<unsigned char*>(dst),
         static_cast<const unsigned char*>(src), bytes);
}

}  // namespace tessera::detail
