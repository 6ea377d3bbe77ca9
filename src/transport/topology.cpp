// hwloc wrapper: the only file that includes <hwloc.h>.
#include "transport/topology.hpp"

#include <hwloc.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <mutex>

namespace tessera::detail {
namespace {

struct TopologyDeleter {
  void operator()(hwloc_topology* t) const { hwloc_topology_destroy(t); }
};
using Topology = std::unique_ptr<hwloc_topology, TopologyDeleter>;

struct BitmapDeleter {
  void operator()(hwloc_bitmap_s* b) const { hwloc_bitmap_free(b); }
};
using Bitmap = std::unique_ptr<hwloc_bitmap_s, BitmapDeleter>;

// The machine's topology with network devices, or null when hwloc cannot load it.
Topology load_topology() {
  // The PEs of a threads job load topologies at once, and hwloc's discovery calls into libraries
  // with unguarded process-wide state (libudev seeds a static hash key; ThreadSanitizer reports
  // the race), so loads take turns.
  static std::mutex load_mutex;
  std::lock_guard lock(load_mutex);
  hwloc_topology_t raw = nullptr;
  if (hwloc_topology_init(&raw) != 0) return nullptr;
  Topology topo(raw);
  hwloc_topology_set_io_types_filter(raw, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
  // The libpciaccess-based "pci" component leaks about 600 KB (its PCI name tables) on every
  // load, i.e. on every init; hwloc's linux component finds the same PCI devices and NICs from
  // sysfs without it (tests/reliability/hygiene_test.cpp counts the mappings).
  hwloc_topology_set_components(raw, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, "pci");
  // Only NUMA nodes, cores and network devices are read here. The "opencl" component would
  // initialise the OpenCL ICD loader (libOpenCL, whose thread-local storage AddressSanitizer's
  // leak check then misreads: "Tracer caught signal 11" at exit, about one 4-process job in
  // four) and "gl" would open the X display; neither describes a NIC.
  hwloc_topology_set_components(raw, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, "opencl");
  hwloc_topology_set_components(raw, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, "gl");
  if (hwloc_topology_load(raw) != 0) return nullptr;
  return topo;
}

std::string list_of(hwloc_const_bitmap_t set) {
  char* text = nullptr;
  if (hwloc_bitmap_list_asprintf(&text, set) < 0 || text == nullptr) return {};
  std::string out(text);
  std::free(text);
  return out;
}

Bitmap parse_list(const std::string& list) {
  Bitmap set(hwloc_bitmap_alloc());
  if (set && hwloc_bitmap_list_sscanf(set.get(), list.c_str()) != 0) set.reset();
  return set;
}

}  // namespace

Placement place_pe(int node_pe) {
  Placement p;
  Topology topo = load_topology();
  if (!topo) {
    p.note = "hwloc could not load the topology";
    return p;
  }
  hwloc_topology_t t = topo.get();
  const int n_numa = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_NUMANODE);
  hwloc_obj_t numa = nullptr;
  // A process already bound inside one NUMA node (by a launcher) keeps it.
  Bitmap bound(hwloc_bitmap_alloc());
  if (bound && hwloc_get_cpubind(t, bound.get(), HWLOC_CPUBIND_PROCESS) == 0) {
    for (int i = 0; i < n_numa; ++i) {
      hwloc_obj_t n = hwloc_get_obj_by_type(t, HWLOC_OBJ_NUMANODE, i);
      if (n->cpuset != nullptr && hwloc_bitmap_isincluded(bound.get(), n->cpuset)) numa = n;
    }
  }
  if (numa == nullptr && n_numa > 0) {
    numa = hwloc_get_obj_by_type(t, HWLOC_OBJ_NUMANODE, static_cast<unsigned>(node_pe % n_numa));
  }
  hwloc_const_cpuset_t cores = hwloc_topology_get_topology_cpuset(t);
  if (numa != nullptr) {
    p.numa_node = static_cast<int>(numa->os_index);
    // A NUMA node is a memory child: its cores are its parent's.
    if (numa->cpuset != nullptr && !hwloc_bitmap_iszero(numa->cpuset)) cores = numa->cpuset;
  }
  p.cpuset = list_of(cores);
  for (hwloc_obj_t dev = hwloc_get_next_osdev(t, nullptr); dev != nullptr;
       dev = hwloc_get_next_osdev(t, dev)) {
    const auto type = dev->attr->osdev.type;
    if (type != HWLOC_OBJ_OSDEV_NETWORK && type != HWLOC_OBJ_OSDEV_OPENFABRICS) continue;
    hwloc_obj_t near = hwloc_get_non_io_ancestor_obj(t, dev);
    if (near != nullptr && near->cpuset != nullptr && hwloc_bitmap_intersects(near->cpuset, cores))
      p.near_nics.emplace_back(dev->name != nullptr ? dev->name : "?");
  }
  if (n_numa <= 1) p.note = "one NUMA node";
  return p;
}

bool bind_thread(const Placement& placement) {
  if (placement.cpuset.empty()) return false;
  Topology topo = load_topology();
  Bitmap set = parse_list(placement.cpuset);
  if (!topo || !set) return false;
  return hwloc_set_cpubind(topo.get(), set.get(), HWLOC_CPUBIND_THREAD) == 0;
}

int nic_distance(const Placement& placement, const std::string& nic) {
  const auto& near = placement.near_nics;
  return std::find(near.begin(), near.end(), nic) != near.end() ? 0 : 1;
}

}  // namespace tessera::detail
