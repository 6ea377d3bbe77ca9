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

class Stream;

// Work captured from a Stream (Stream::begin_capture ... end_capture), replayed by launch() as
// often as wanted: a CUDA or HIP graph on a GPU backend (cudaGraphInstantiate, cudaGraphLaunch),
// the recorded work items on the host backend. A replay runs the very work the capture enqueued,
// with the arguments it had then: what must change from replay to replay (epochs, sequence
// numbers, inputs) has to live in memory the work reads when it runs (docs/graphs.md).
class Graph {
 public:
  Graph();
  ~Graph();
  Graph(Graph&&) noexcept;
  Graph& operator=(Graph&&) noexcept;
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  // Enqueues one replay of the captured work on `stream`, which runs it after its earlier work;
  // work captured from other streams that joined the capture (Stream::wait_for) replays on those
  // streams, ordered as it was captured. Failures are reported by the streams' synchronize(), as
  // for work enqueued directly. A graph captured on the host backend replays on host streams, a
  // GPU graph on native streams of its device; anything else is Error(invalid_argument), as is
  // a graph that holds nothing (default-constructed, or moved from).
  void launch(Stream& stream);

  // Work items captured (kernel launches, stream copies, waits between streams); on a GPU
  // backend the graph's node count.
  std::size_t size() const;
  // False for a default-constructed or moved-from graph.
  explicit operator bool() const;

 private:
  friend class Stream;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

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
  // During a capture (capturing()): Error(invalid_argument), nothing waited for.
  void synchronize();

  // How many operations (kernel launches, stream copies, waits for other streams) are enqueued
  // and not finished yet; 0 when the stream is idle. On a GPU backend, the host-side queue only.
  std::size_t in_flight() const;
  // Waits at most `bound` for the work enqueued so far; true when it all finished. Failures stay
  // for synchronize() to report.
  bool wait_idle(std::chrono::milliseconds bound);

  // Starts capturing: the work enqueued on this stream from now on is recorded, not run, until
  // end_capture() returns it as a Graph (a CUDA graph on a GPU backend: cudaStreamBeginCapture,
  // thread-local mode). A stream that waits for a capturing stream (wait_for) joins its capture;
  // the capturing stream must wait for each joined stream again before end_capture. While a
  // capture is open, synchronize() on a capturing stream is Error(invalid_argument), as is a
  // second begin_capture, and an op that cannot be captured says so when it is called.
  void begin_capture();
  // Ends the capture begun on this stream and returns the captured work. Error(invalid_argument)
  // when this stream began no capture, or a stream that joined it was not waited for again.
  Graph end_capture();
  // True while work enqueued on this stream is captured (begun here or joined through wait_for).
  bool capturing() const;

  int pe() const;
  // The native stream (a cudaStream_t) as a pointer; null on the host backend.
  void* native_handle() const;
  // The device of the native stream; -1 on the host backend.
  int native_device() const;

 private:
  friend class Graph;
  // wait_for when either stream is capturing: records the wait in the capture, joining this
  // stream to `other`'s capture when only `other` captures.
  void join_capture(Stream& other);
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tessera
