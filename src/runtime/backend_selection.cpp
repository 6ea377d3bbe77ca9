#include "runtime/backend_selection.hpp"

#include <string>

#include "runtime/cuda_backend.hpp"
#include "runtime/hip_backend.hpp"
#include "tessera/error.hpp"

namespace tessera {
namespace detail {

Backend select_backend(Backend asked, int& gpu_devices) {
  switch (asked) {
    case Backend::host:
      return Backend::host;
    case Backend::hip: {
      const hip::Probe probe = hip::probe();
      gpu_devices = probe.devices;
      if (probe.devices > 0) return Backend::hip;
      throw Error(ErrorCode::backend, -1,
                  "backend 'hip' was asked for (TESSERA_BACKEND=hip), but no HIP device is "
                  "usable: " +
                      probe.why_none);
    }
    case Backend::cuda:
    case Backend::automatic: {
      const cuda::Probe probe = cuda::probe();
      gpu_devices = probe.devices;
      if (probe.devices > 0) return Backend::cuda;
      if (asked == Backend::automatic) {
        const hip::Probe hip_probe = hip::probe();
        gpu_devices = hip_probe.devices;
        return hip_probe.devices > 0 ? Backend::hip : Backend::host;
      }
      throw Error(ErrorCode::backend, -1,
                  "backend 'cuda' was asked for (TESSERA_BACKEND=cuda), but no CUDA device is "
                  "usable: " +
                      probe.why_none);
    }
  }
  throw Error(ErrorCode::internal, -1, "unknown backend");
}

}  // namespace detail

bool backend_available(Backend backend) noexcept {
  switch (backend) {
    case Backend::automatic:
    case Backend::host:
      return true;
    case Backend::cuda:
      try {
        return detail::cuda::probe().devices > 0;
      } catch (...) {
        return false;
      }
    case Backend::hip:
      try {
        return detail::hip::probe().devices > 0;
      } catch (...) {
        return false;
      }
  }
  return false;
}

}  // namespace tessera
