// Stream: an ordered executor for one PE's device work on the host backend (a CUDA/HIP stream
// on GPUs). Work runs in the order it was enqueued; a failure is kept and reported at the next
// synchronize(), and work enqueued after a failure is skipped until then.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>

#include "tessera/device/group.hpp"

namespace tessera {

namespace detail {
class NativeStream;
}

class Stream {
 public:
  // A stream whose failures name PE `pe` (-1: unknown). Its threads start on first use.
  explicit Stream(int pe = -1);
  // A stream over a GPU backend's native stream (the Runtime makes these on the cuda backend):
  // kernels go to the native stream, synchronize() also waits for it.
  Stream(int pe, std::unique_ptr<detail::NativeStream> native);
  // Waits for the work already enqueued, then joins every thread; an unreported failure is
  // dropped (call synchronize() first to see it).
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  // Runs `fn` on the stream after all earlier work.
  void enqueue(std::function<void()> fn);
  // Runs fn(Block(b, grid)) for every b in [0, grid) after all earlier work, all blocks at once
  // on their own threads (co-resident), and completes when the last block returns.
  void enqueue_grid(int grid, std::function<void(device::Block)> fn);

  // Makes the work enqueued on this stream from now on wait until everything enqueued on `other`
  // so far has run (a CUDA event recorded on `other` and waited for here). A failure of that work
  // moves from `other` to this stream (reported by this stream's synchronize(), and `other` runs
  // its later work again), so the caller that waits is the one who hears of it. Host backend
  // only for now: throws Error(backend) when either stream has a native GPU stream.
  void wait_for(Stream& other);

  // Blocks until all work enqueued so far is done. Throws the first failure since the previous
  // synchronize as tessera::Error: a device timeout as ErrorCode::timeout, a bad PE, pointer or
  // shape as invalid_argument, an unmapped peer as transport.
  void synchronize();

  // How many operations (kernel launches, stream copies, waits for other streams) are enqueued
  // and not finished yet; 0 when the stream is idle. On a GPU backend, the host-side queue only.
  std::size_t in_flight() const;
  // Waits at most `bound` for the work enqueued so far; true when it all finished. Failures stay
  // for synchronize() to report.
  bool wait_idle(std::chrono::milliseconds bound);

  int pe() const;
  // The native stream (a cudaStream_t) as a pointer; null on the host backend.
  void* native_handle() const;
  // The device of the native stream; -1 on the host backend.
  int native_device() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tessera
