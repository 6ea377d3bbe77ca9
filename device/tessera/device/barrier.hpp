// Device-side barriers across PEs: over every PE of the job (barrier, sync_all) and over the
// members of a Team (barrier(g, ctx, team), team_sync). Their counters only ever grow, so nothing
// is reset between calls and a barrier may run in any number of kernels, one after another. The
// whole-job counters live in the control area Runtime::init maps with the heap (reached through
// ctx.control_page), a team's at the end of its workspace (TeamBarrierWords in team.hpp).
//
// Every barrier is entered by exactly one group per PE at a time (one Thread, Warp or Block, not
// every block of a grid at once; different groups may take turns, each entering alone); in
// checked mode (TESSERA_CHECK=1) a barrier entered by a second group of the same PE while the
// first is inside is reported naming both groups.
// grid_sync (grid.hpp) is the barrier among the blocks of one launch.
#pragma once

#include "tessera/device/context.hpp"
#include "tessera/device/group.hpp"
#include "tessera/device/team.hpp"

namespace tessera::device {

// Returns in every thread of `g` once every PE has entered the same barrier; every put, nbi put
// and store any PE made before entering it is complete and visible to every PE after it.
// Exactly one group per PE calls it (not every block of a grid). Bounded by ctx.timeout_ns.
template <class G>
TESSERA_KERNEL_CODE void barrier(G g, const Context& ctx);

// barrier under OpenSHMEM's name (shmem_barrier_all).
template <class G>
TESSERA_KERNEL_CODE void barrier_all(G g, const Context& ctx);

// As barrier, but only synchronises: stores made before it are visible to every PE after it,
// while nbi operations still in flight are not completed (on the host backend the two coincide).
template <class G>
TESSERA_KERNEL_CODE void sync_all(G g, const Context& ctx);

// The old name of sync_all, which read like the group's own g.sync().
template <class G>
[[deprecated(
    "use sync_all(g, ctx): a whole-job sync, not the group's g.sync()")]] TESSERA_KERNEL_CODE void
sync(G g, const Context& ctx);

// Returns in every thread of `g` once every member of `team` has entered the same barrier on
// it; every put, nbi put and store a member made before entering is complete and visible to
// every member after it. Called by every member (one group each), never by a non-member; the
// team needs its workspace (made by team_world / team_node / team_split_strided). Barriers on
// different teams are independent. Bounded by ctx.timeout_ns.
template <class G>
TESSERA_KERNEL_CODE void barrier(G g, const Context& ctx, const Team& team);

// As barrier over `team`, but only synchronises: stores made before it are visible to every
// member after it; nbi operations in flight are not completed.
template <class G>
TESSERA_KERNEL_CODE void team_sync(G g, const Context& ctx, const Team& team);

}  // namespace tessera::device

#include "tessera/device/impl/barrier_funcs.hpp"
