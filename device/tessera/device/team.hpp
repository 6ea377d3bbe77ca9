// Team: a strided set of world PEs (OpenSHMEM style) that a collective runs over, as device code
// sees it. A plain struct made on the host (tessera::team_world, team_node, team_split_strided in
// <tessera/team.hpp>) and passed to kernels by value; team rank i is world PE start + i * stride.
#pragma once

#include <cstddef>
#include <type_traits>

#include "tessera/device/platform/macros.hpp"

namespace tessera::device {

struct Team {
  int start = 0;     // world PE of team rank 0
  int stride = 1;    // world-PE distance between consecutive ranks (>= 1)
  int size = 0;      // number of members
  int my_rank = -1;  // this PE's rank in the team; -1 when this PE is not a member
  // The team's symmetric workspace (signal words and staging of its collectives), allocated by
  // the host maker at the same heap offset on every PE; null in a Team made by hand, which can
  // still answer membership questions but cannot run a collective.
  void* workspace = nullptr;
  std::size_t workspace_bytes = 0;

  // Number of members.
  TESSERA_HOST_DEVICE constexpr int n_pes() const { return size; }
  // The world PE of team rank `i` (0 <= i < size; not checked).
  TESSERA_HOST_DEVICE constexpr int pe(int i) const { return start + i * stride; }
  // The team rank of world PE `world_pe`, or -1 when it is not a member.
  TESSERA_HOST_DEVICE constexpr int rank_of(int world_pe) const {
    const int d = world_pe - start;
    if (d < 0 || d % stride != 0) return -1;
    return d / stride < size ? d / stride : -1;
  }
  // True when this PE belongs to the team.
  TESSERA_HOST_DEVICE constexpr bool is_member() const { return my_rank >= 0; }
};

static_assert(std::is_trivially_copyable_v<Team>, "Team is passed to kernels by value");

}  // namespace tessera::device
