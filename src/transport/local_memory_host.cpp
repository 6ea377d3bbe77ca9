// Builds without the CUDA backend: every local buffer is host memory (issue 18 item 3; see
// heap_registration.hpp). A HIP job's buffers outside the heap are registered as host memory
// until the HIP runtime wrapper answers this too.
#include "transport/heap_registration.hpp"

namespace tessera::detail {

HeapMemory local_buffer_memory(const void*, int* device) {
  *device = -1;
  return HeapMemory::host;
}

}  // namespace tessera::detail
