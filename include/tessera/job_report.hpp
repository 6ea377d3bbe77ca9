// The picture of a job from the inside, as tessera-info and `python -m tessera.info` print it.
#pragma once

#include <string>

#include "tessera/runtime.hpp"

namespace tessera {

// Collective: every PE calls it. Returns, on PE 0, a text of several lines: PE count, backend,
// bootstrap and heap size; the nodes and their PEs; per PE its node, NUMA node, the cores its
// proxy thread runs on, the fabric provider and NIC, and how it reaches each PE (self, mapped,
// proxy, unreachable). Returns an empty string on the other PEs.
std::string job_report(Runtime& rt);

}  // namespace tessera
