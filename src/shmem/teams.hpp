// The predefined teams' objects, filled in by shmem_init and emptied by shmem_finalize.
#pragma once

#include "shmem/state.hpp"

namespace tessera::shmem {

// SHMEM_TEAM_WORLD: every PE. SHMEM_TEAM_SHARED: the PEs whose heaps this PE maps. Also
// allocates shmem_team_sync's counters (collective: the first block of the heap).
void init_predefined_teams(State& s);
void release_predefined_teams();

}  // namespace tessera::shmem
