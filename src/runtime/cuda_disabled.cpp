// The CUDA backend's entry points in a build without CUDA: nothing is visible, and asking for
// anything else is an error that says how to get it.
#include <string>

#include "runtime/cuda_backend.hpp"
#include "tessera/error.hpp"

namespace tessera::detail::cuda {
namespace {

[[noreturn]] void not_built(int pe) {
  throw Error(ErrorCode::backend, pe,
              "this build of Tessera has no CUDA backend (configure with "
              "-DTESSERA_ENABLE_CUDA=ON and a CUDA >= 12 toolkit)");
}

}  // namespace

Probe probe() {
  Probe p;
  p.why_none =
      "this build of Tessera has no CUDA backend (TESSERA_ENABLE_CUDA was off or nvcc "
      "was not found at configure time)";
  return p;
}

int select_device(int, int, int pe) { not_built(pe); }

std::unique_ptr<HeapSegment> make_heap_segment(const SegmentRequest& request, int) {
  not_built(request.pe);
}

std::unique_ptr<NativeStream> make_stream(int, int pe) { not_built(pe); }

ProxyRing make_proxy_ring(std::size_t, int, int pe) { not_built(pe); }

}  // namespace tessera::detail::cuda
