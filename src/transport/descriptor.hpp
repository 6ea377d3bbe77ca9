// Decoding and validation of proxy descriptors (device/tessera/device/proxy_wire.hpp) before the
// proxy hands them to the NIC. Pure functions of the descriptor and the heap's shape, so they can
// be tested and fuzzed without a fabric. Internal.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "tessera/device/proxy_wire.hpp"

namespace tessera::detail {

// The remote memory a descriptor may touch: the user heap [0, heap_bytes) and the runtime's
// control words [control_offset, control_offset + control_bytes), at the same offsets on all PEs;
// a kProxyStaticData descriptor, the static data region [0, static_bytes) instead (0 while none
// is registered, so such a descriptor is refused).
struct ProxyBounds {
  int n_pes = 0;
  std::size_t heap_bytes = 0;
  std::size_t control_offset = 0;
  std::size_t control_bytes = 0;
  std::size_t static_bytes = 0;
};

// Bytes of the word an atomic descriptor works on (4 or 8), or 0 for an unknown word type.
std::size_t proxy_word_bytes(device::ProxyWord word);

// Empty when `d` is well formed and every remote range it names lies inside `bounds`; else a
// sentence naming the field and the values, e.g. "put to PE 1: heap offset 4096 + 8192 bytes
// runs past the 8192-byte heap".
std::string validate_descriptor(const device::ProxyDescriptor& d, const ProxyBounds& bounds);

// "put", "get", ... for messages.
const char* to_string(device::ProxyOp op);

}  // namespace tessera::detail
