// The device half of the network proxy (DESIGN §4, §6): a call on a PE whose heap is not mapped
// here (another node, or TESSERA_P2P=0) becomes a 64-byte descriptor in a ring in host-visible
// memory, which this PE's proxy thread turns into libfabric operations. The ring's wire format
// is proxy_wire.hpp; device code's producer is impl/proxy_producer.hpp.
#pragma once

#include "tessera/device/impl/proxy_producer.hpp"
#include "tessera/device/proxy_wire.hpp"
