// The network limit the benchmarks compare the proxy against: raw fi_write calls on a fresh
// endpoint of a Runtime's fabric provider. A tool, not API: benchmarks include it from src/.
// Defined in src/transport/runtime_transport.cpp.
#pragma once

#include <cstddef>
#include <vector>

#include "tessera/runtime.hpp"

namespace tessera::detail {

// Collective over rt's PEs: microseconds of each of `rounds` raw fi_write calls of `bytes` from
// PE `from` to PE `to` on a fresh endpoint of the proxy's provider (or TESSERA_FABRIC_PROVIDER's
// when no proxy runs), each waited for to completion. Times on `from`; empty elsewhere. Throws
// Error(transport) without libfabric.
std::vector<double> fabric_raw_write_times(Runtime& rt, int from, int to, std::size_t bytes,
                                           int rounds);

}  // namespace tessera::detail
