// A GPU backend's stream under a tessera::Stream: kernels go to it, synchronize() waits for it.
// Internal; the CUDA and HIP implementation is GpuStream in gpu/gpu_runtime.cpp.
#pragma once

#include <cstddef>
#include <memory>

namespace tessera::detail {

class NativeStream;

// A captured GPU graph, instantiated (cudaGraphExec_t): launched on a native stream of its device.
class NativeGraph {
 public:
  virtual ~NativeGraph() = default;
  // cudaGraphLaunch on `stream`; throws Error(backend) naming the PE on failure.
  virtual void launch(NativeStream& stream) = 0;
  // The graph's node count.
  virtual std::size_t size() const = 0;
  virtual int device() const = 0;
};

class NativeStream {
 public:
  virtual ~NativeStream() = default;
  // The toolchain's stream handle (cudaStream_t) as a pointer.
  virtual void* handle() const = 0;
  // The device the stream belongs to; kernels are launched with it current.
  virtual int device() const = 0;
  // Waits for all work on the stream; throws Error(backend) naming the PE on a device fault.
  virtual void synchronize() = 0;
  // cudaStreamBeginCapture (thread-local mode); cudaStreamEndCapture, then the graph
  // instantiated. Both throw Error(backend) naming the PE and the call on failure.
  virtual void begin_capture() = 0;
  virtual std::unique_ptr<NativeGraph> end_capture() = 0;
};

}  // namespace tessera::detail
