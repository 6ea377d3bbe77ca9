// The platform layer: the one place where toolchains differ (execution-space macros, scoped
// atomics and fences, thread ids, clocks, spin hints, failure reports, tensor-core MMA).
// Everything else in Tessera's device side is written once against these names, in namespace
// tessera::device::platform, and tests no compiler macro itself.
//
// One header per branch under platform/, each compiled only in its own compiler pass:
//   macros.hpp    the macros, from the compiler's predefined macros alone (read it for what
//                 TESSERA_HOST_DEVICE and TESSERA_KERNEL_CODE mean);
//   host.hpp      host compilers and the host pass of nvcc/hipcc: the host backend;
//   cuda.hpp      nvcc's device pass; hip.hpp hipcc's device pass; gpu_copy.hpp what both share;
//   mma.hpp       warp-level tensor-core tiles (CUDA sm_80+), stand-ins elsewhere.
#pragma once

#include "tessera/device/platform/cuda.hpp"
#include "tessera/device/platform/hip.hpp"
#include "tessera/device/platform/host.hpp"
#include "tessera/device/platform/macros.hpp"
#include "tessera/device/platform/mma.hpp"
