// Stand-in for builds without hwloc: placement unknown, nothing bound.
#include "transport/topology.hpp"

namespace tessera::detail {

Placement place_pe(int) {
  Placement p;
  p.note = "hwloc not built in";
  return p;
}

bool bind_thread(const Placement&) { return false; }

int nic_distance(const Placement&, const std::string&) { return 1; }

}  // namespace tessera::detail
