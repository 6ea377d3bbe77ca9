// Host-side Runtime::put/get to a PE reached through the network proxy (DESIGN §6): the call
// becomes one descriptor on this PE's proxy ring and waits for it, like a blocking device put.
// And the OpenSHMEM layer's registration of static data with the proxy. Internal; defined in
// runtime_transport.cpp.
#pragma once

#include <cstddef>

#include "tessera/device/proxy_wire.hpp"

namespace tessera {
class Runtime;
}

namespace tessera::detail {

class RuntimeImpl;

// When `pe` is reached through this PE's proxy: moves `bytes` between local `local` and heap
// offset `remote_offset` on `pe` (`op` is ProxyOp::put or ProxyOp::get), returns once complete
// and answers true. False, doing nothing, for any other PE (mapped, self, or not a PE of the
// job: the caller's own path reports it). Throws Error(timeout) after the job's timeout, or the
// proxy's failure (PeerLost naming `pe`).
bool remote_copy_via_proxy(RuntimeImpl& rt, device::ProxyOp op, int pe, std::size_t remote_offset,
                           void* local, std::size_t bytes);

// Collective: when the job runs a network proxy (on every PE or on none, as start_transport
// decides alike everywhere), registers this PE's static data segment [base, base + bytes) with it
// and learns every PE's (FabricTransport::register_static_data), then answers true; false, doing
// nothing, when there is no proxy. Throws Error as the runtime does.
bool register_static_data_with_proxy(Runtime& runtime, char* base, std::size_t bytes);

}  // namespace tessera::detail
