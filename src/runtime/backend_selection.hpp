// Which backend a PE runs on: the one asked for, or for `automatic` the GPU backend this build
// has and that sees a device. Internal.
#pragma once

#include "tessera/runtime.hpp"

namespace tessera::detail {

// The backend asked for, resolved: `automatic` is the GPU backend (cuda, then hip) that this
// build has and that sees a device, else host. `gpu_devices` is the chosen GPU backend's device
// count. Throws Error(backend) when the one asked for cannot run here.
Backend select_backend(Backend asked, int& gpu_devices);

}  // namespace tessera::detail
