// Where a PE's proxy thread should run and which NIC is nearest (DESIGN §6), from hwloc. Built
// without hwloc, or on a machine hwloc cannot describe, every query answers "unknown" and
// nothing is bound. Internal; topology.cpp is the only file that includes <hwloc.h>.
#pragma once

#include <string>
#include <vector>

namespace tessera::detail {

struct Placement {
  int numa_node = -1;                  // the PE's NUMA node (OS index), -1 when unknown
  std::string cpuset;                  // its cores, as a list ("0-15"); empty when unknown
  std::vector<std::string> near_nics;  // network / OpenFabrics devices local to those cores
  std::string note;                    // why placement is partial ("hwloc not built in", ...)
};

// The placement of the `node_pe`-th PE of a node: the NUMA node it is bound to, else NUMA node
// node_pe mod (NUMA nodes), and its cores.
Placement place_pe(int node_pe);

// Binds the calling thread to the placement's cores; false (and nothing changed) when it cannot.
bool bind_thread(const Placement& placement);

// Orders NIC names (as libfabric reports them: "eth0", "mlx5_0") by distance from the
// placement: 0 for a NIC local to its cores, 1 otherwise.
int nic_distance(const Placement& placement, const std::string& nic);

}  // namespace tessera::detail
