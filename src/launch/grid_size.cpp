#include "launch/grid_size.hpp"

#include <sched.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <thread>

#include "tessera/error.hpp"
#include "tessera/runtime.hpp"

namespace tessera::detail {

int blocks_per_pe(int mask_cores, int node_cores, int node_pes, int cap) {
  const long mask = std::max(1, mask_cores);
  const long node = std::max<long>(mask, node_cores);
  const long pes = std::max(1, node_pes);
  const long sharing = std::max<long>(1, (pes * mask + node - 1) / node);
  const long share = std::max<long>(1, mask / sharing);
  return static_cast<int>(std::clamp<long>(share, 1, std::max(1, cap)));
}

int mask_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(1, CPU_COUNT(&set));
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

int node_cores() {
  return std::max(mask_cores(), static_cast<int>(std::thread::hardware_concurrency()));
}

int default_blocks(Runtime& rt, int cap) {
  if (const char* text = std::getenv("TESSERA_CORES"); text != nullptr && *text != '\0') {
    char* end = nullptr;
    const long value = std::strtol(text, &end, 10);
    if (end == text || *end != '\0' || value < 1 || value > 1 << 20) {
      throw Error(ErrorCode::invalid_argument, rt.pe(),
                  std::string("TESSERA_CORES must be a whole number of cores, at least 1, got '") +
                      text + "'");
    }
    // The cores the node's PEs have between them.
    const int cores = static_cast<int>(value);
    return blocks_per_pe(cores, cores, rt.node_size(), cap);
  }
  return blocks_per_pe(mask_cores(), node_cores(), rt.node_size(), cap);
}

}  // namespace tessera::detail
