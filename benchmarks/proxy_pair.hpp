// Whether the benchmarks' pair (PE 0 and PE 1) talks through the network proxy: then put and
// signal measure the proxy path and compare it with raw libfabric on the same provider.
#pragma once

#include <cstdint>
#include <vector>

#include "tessera/runtime.hpp"

namespace tessera::bench {

// Collective: PE 0's view of how it reaches PE 1, shared with every PE.
inline bool proxy_between_0_and_1(Runtime& rt) {
  std::vector<std::uint32_t> flags(static_cast<std::size_t>(rt.n_pes()), 0);
  if (rt.pe() == 0 && rt.n_pes() > 1) flags[0] = rt.transport(1) == Transport::proxy ? 1 : 0;
  rt.bootstrap().allgather(flags.data(), sizeof(std::uint32_t));
  return flags[0] != 0;
}

}  // namespace tessera::bench
