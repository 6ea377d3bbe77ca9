// tessera.Team: a strided set of world PEs that collectives run over (tessera::Team), made by
// Runtime.team_world / team_node / team_split_strided.
#pragma once

#include <nanobind/nanobind.h>

#include <memory>

#include "runtime.hpp"
#include "state.hpp"

namespace tessera::python {

struct PyTeam {
  std::shared_ptr<RuntimeState> state;
  int id = -1;  // index into state->teams
  // The C++ team; throws Error(invalid_argument) naming `what` once the runtime was finalized.
  const Team& get(const char* what) const;
};

// Collective the first time (tessera::team_world); later calls return the same team.
PyTeam team_world(const PyRuntime& rt);
// Collective the first time (tessera::team_node); later calls return the same team.
PyTeam team_node(const PyRuntime& rt);
// Collective the first time for these arguments (tessera::team_split_strided); later calls
// with the same parent and arguments return the same team.
PyTeam team_split_strided(const PyRuntime& rt, const PyTeam& parent, int start, int stride,
                          int size);
// Members only (tessera::team_over_block): the team over `block`, a heap array reserved earlier by
// a collective allocation; the members synchronize before using it.
PyTeam team_over_block(const PyRuntime& rt, int start, int stride, int size,
                       nanobind::handle block);
// The team a collective's `team=` argument names: None (null) is the world team (made on first
// use, collectively, like team_world).
Team team_or_world(const PyRuntime& rt, const PyTeam* team, const char* what);

void bind_team(nanobind::module_& m);

}  // namespace tessera::python
