// A GPU backend's stream under a tessera::Stream: kernels go to it, synchronize() waits for it.
// Internal; the CUDA implementation is in runtime/cuda_runtime.cpp.
#pragma once

namespace tessera::detail {

class NativeStream {
 public:
  virtual ~NativeStream() = default;
  // The toolchain's stream handle (cudaStream_t) as a pointer.
  virtual void* handle() const = 0;
  // The device the stream belongs to; kernels are launched with it current.
  virtual int device() const = 0;
  // Waits for all work on the stream; throws Error(backend) naming the PE on a device fault.
  virtual void synchronize() = 0;
};

}  // namespace tessera::detail
