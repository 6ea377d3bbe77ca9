#include "runtime/backend_selection.hpp"

#include <string>

#include "gpu/gpu_backend.hpp"
#include "tessera/error.hpp"

namespace tessera {
namespace detail {
namespace {

// The host backend: memfd heaps shared by the node's processes, host executor streams, ordinary
// memory for rings and tables.
class HostBackend final : public ExecutionBackend {
 public:
  Backend kind() const override { return Backend::host; }
  bool host_memory() const override { return true; }
  int select_device(int, int) override { return -1; }
  std::unique_ptr<HeapSegment> make_heap_segment(const SegmentRequest& request) override {
    return make_host_heap_segment(request);
  }
  std::unique_ptr<Stream> make_stream(int pe) override { return std::make_unique<Stream>(pe); }
  ProxyRing make_proxy_ring(std::size_t bytes, int) override { return make_host_proxy_ring(bytes); }
};

[[noreturn]] void unusable(const char* name, const char* env, const GpuProbe& probe) {
  throw Error(ErrorCode::backend, -1,
              std::string("backend '") + name + "' was asked for (TESSERA_BACKEND=" + env +
                  "), but no " + (name[0] == 'c' ? "CUDA" : "HIP") +
                  " device is usable: " + probe.why_none);
}

}  // namespace

std::unique_ptr<ExecutionBackend> select_backend(Backend asked) {
  switch (asked) {
    case Backend::host:
      return std::make_unique<HostBackend>();
    case Backend::hip: {
      const GpuProbe probe = hip::probe();
      if (probe.devices > 0) return hip::make_backend(probe.devices);
      unusable("hip", "hip", probe);
    }
    case Backend::cuda:
    case Backend::automatic: {
      const GpuProbe probe = cuda::probe();
      if (probe.devices > 0) return cuda::make_backend(probe.devices);
      if (asked == Backend::cuda) unusable("cuda", "cuda", probe);
      const GpuProbe hip_probe = hip::probe();
      if (hip_probe.devices > 0) return hip::make_backend(hip_probe.devices);
      return std::make_unique<HostBackend>();
    }
  }
  throw Error(ErrorCode::internal, -1, "unknown backend");
}

std::string gpu_preflight_report(bool& ok) {
  bool cuda_ok = false, hip_ok = false;
  std::string report = format_preflight(cuda::preflight(), cuda_ok);
  report += format_preflight(hip::preflight(), hip_ok);
  ok = cuda_ok || hip_ok;
  if (!ok) report += "preflight: no GPU is usable (causes above)\n";
  return report;
}

}  // namespace detail

bool backend_available(Backend backend) noexcept {
  try {
    switch (backend) {
      case Backend::automatic:
      case Backend::host:
        return true;
      case Backend::cuda:
        return detail::cuda::probe().devices > 0;
      case Backend::hip:
        return detail::hip::probe().devices > 0;
    }
  } catch (...) {
  }
  return false;
}

}  // namespace tessera
