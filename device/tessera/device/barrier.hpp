// Device-side barrier across all PEs of the job. Its counters live in the symmetric segment, in
// the control area Runtime::init maps right after the heap (reached through ctx.control_page),
// and only ever grow, so nothing is reset between calls and a barrier may run in any number of
// kernels, one after another.
#pragma once

#include "tessera/device/context.hpp"
#include "tessera/device/group.hpp"

namespace tessera::device {

// Returns in every thread of `g` once every PE has entered the same barrier; every put, nbi put
// and store any PE made before entering it is complete and visible to every PE after it.
// Exactly one group per PE calls it (not every block of a grid). Bounded by ctx.timeout_ns.
template <class G>
TESSERA_KERNEL_CODE void barrier(G g, const Context& ctx);

// As barrier, but only synchronises: stores made before it are visible after it, while nbi
// operations still in flight are not completed (on the host backend the two coincide).
template <class G>
TESSERA_KERNEL_CODE void sync(G g, const Context& ctx);

}  // namespace tessera::device

#include "tessera/device/impl/barrier_funcs.hpp"
