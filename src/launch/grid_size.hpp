// Default grid sizes on the host backend. Every block of a host grid is a thread that may spin,
// so a node's PEs together should run no more blocks than the node has cores for them: more
// and the blocks that wait take the cores of the blocks they wait for (a scheduler slice per
// hand-off). Internal; the ops that choose a grid ask default_blocks().
#pragma once

namespace tessera {
class Runtime;
}

namespace tessera::detail {

// Blocks one PE's grid may use: the PE may run on `mask_cores` of the node's `node_cores` cores,
// and the node's `node_pes` PEs are taken to be spread evenly over the node, so
// ceil(node_pes * mask_cores / node_cores) of them share this PE's cores (all of them when no PE
// is bound, one when each is bound to cores of its own). An even share of those cores, at least
// 1 (a grid needs a block) and at most `cap`.
int blocks_per_pe(int mask_cores, int node_cores, int node_pes, int cap);

// The cores this process may run on (its CPU affinity mask; the hardware's count when the mask
// cannot be read), and the node's cores (std::thread::hardware_concurrency, at least the mask).
int mask_cores();
int node_cores();

// blocks_per_pe for this PE of `rt` (its node's PEs). TESSERA_CORES=<n> (n >= 1) says the node's
// PEs have n cores between them (e.g. a container whose CPU quota is below its mask); any other
// value throws Error(invalid_argument) naming it.
int default_blocks(Runtime& rt, int cap);

}  // namespace tessera::detail
