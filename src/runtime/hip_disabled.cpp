// The HIP backend's entry points in a build without HIP: nothing is visible, and asking for
// anything else is an error that says how to get it.
#include <string>

#include "runtime/hip_backend.hpp"
#include "tessera/error.hpp"

namespace tessera::detail::hip {
namespace {

[[noreturn]] void not_built(int pe) {
  throw Error(ErrorCode::backend, pe,
              "this build of Tessera has no HIP backend (configure with "
              "-DTESSERA_ENABLE_HIP=ON and ROCm >= 5.2: hipcc, libamdhip64-dev)");
}

}  // namespace

Probe probe() {
  Probe p;
  p.why_none =
      "this build of Tessera has no HIP backend (TESSERA_ENABLE_HIP was off or ROCm's HIP "
      "runtime was not found at configure time)";
  return p;
}

int select_device(int, int, int pe) { not_built(pe); }

std::unique_ptr<HeapSegment> make_heap_segment(const SegmentRequest& request, int) {
  not_built(request.pe);
}

std::unique_ptr<NativeStream> make_stream(int, int pe) { not_built(pe); }

ProxyRing make_proxy_ring(std::size_t, int, int pe) { not_built(pe); }

}  // namespace tessera::detail::hip
