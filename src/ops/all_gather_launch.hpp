// The one-block all-gather kernel of ops::all_gather, shared with the fused ops' bulk gather
// (FusedGemmState::all_gather): one kernel, its words and call count given by the caller.
#pragma once

#include <cstddef>

#include "tessera/device/ops/all_gather.hpp"
#include "tessera/device/signal.hpp"
#include "tessera/runtime.hpp"
#include "tessera/stream.hpp"

namespace tessera::detail {

// Enqueues one all-gather of `bytes` from every PE's `send` into slot p of the symmetric `recv`:
// ring, staged one-shot (staging non-null: 2 * n_pes * bytes of symmetric memory) or one-shot
// straight into recv, on `sigs`, the call numbered on the device from `calls`, so it may be
// captured and replayed.
void launch_all_gather(Runtime& rt, Stream& stream, void* recv, const void* send, std::size_t bytes,
                       const device::ops::AllGatherSignals& sigs, device::DeviceEpoch calls,
                       bool ring, void* staging);

}  // namespace tessera::detail
