// The predefined teams' objects, filled in by shmem_init and emptied by shmem_finalize.
#pragma once

#include "shmem/state.hpp"

namespace tessera::shmem {

// SHMEM_TEAM_WORLD: every PE. SHMEM_TEAM_SHARED: the PEs whose heaps this PE maps. Also
// allocates shmem_team_sync's counters (collective: the first block of the heap).
void init_predefined_teams(State& s);
void release_predefined_teams();

// True for a team handle this PE belongs to: not SHMEM_TEAM_INVALID, not emptied by finalize.
bool usable_team(shmem_team_t team);

// Returns once every member of `team` has entered (a dissemination barrier over the counters
// init_predefined_teams allocated); this PE's stores before it are visible to every member after
// it. Outstanding RMA is not completed. `routine` names the caller in a timeout's message.
void team_sync(State& s, const tessera_shmem_team& team, const char* routine);

}  // namespace tessera::shmem
