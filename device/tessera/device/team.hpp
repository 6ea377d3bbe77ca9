// Team: a strided set of world PEs (OpenSHMEM style) that a collective runs over, as device code
// sees it. A plain struct made on the host (tessera::team_world, team_node, team_split_strided in
// <tessera/team.hpp>) and passed to kernels by value; team rank i is world PE start + i * stride.
#pragma once

#include <cstddef>
#include <cstdint>
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

// The rank in `to` of the PE that has rank `rank` in `from`, or -1 when that PE is not a member
// of `to` or `rank` lies outside [0, from.size) (OpenSHMEM's shmem_team_translate_pe). Pure
// arithmetic on the two teams: no communication, callable anywhere.
TESSERA_HOST_DEVICE constexpr int translate(const Team& from, int rank, const Team& to) {
  return rank < 0 || rank >= from.size ? -1 : to.rank_of(from.pe(rank));
}

// The control words of the barrier over a team (barrier(g, ctx, team) / team_sync in
// barrier.hpp): the last bytes_for(team.size) bytes of the team's workspace, at the same heap
// offset on every member, zeroed by the team maker and never reset. Words, from `words(team)`:
//   kArrivals   every member entering the n-th barrier of the team adds 1 here, on every
//               member, with release at system scope; the n-th barrier on a member returns once
//               its own word reaches n * team.size (acquire). Only ever grows.
//   kEntered    this PE's count of barriers it has entered on the team (n for the n-th); only
//               this PE touches it.
//   kOccupant   checked mode: the tag (GroupTag in barrier_funcs.hpp) of the group inside a
//               barrier on this PE right now, 0 when none; this PE only.
//   kLastLaunch checked mode: the launch of the group that entered last on this PE (it only
//               words the report); this PE only. kLastGroup is no longer written.
//   kSeen + r   the number of barriers member r has entered, written by r (relaxed) before its
//               arrivals, so a barrier that times out names the members that never came.
struct TeamBarrierWords {
  static constexpr std::size_t kArrivals = 0;
  static constexpr std::size_t kEntered = 8;  // its own cache line: peers write kArrivals
  static constexpr std::size_t kOccupant = 9;
  static constexpr std::size_t kLastLaunch = 10;
  static constexpr std::size_t kLastGroup = 11;
  static constexpr std::size_t kSeen = 16;

  // Bytes of the words of a team of `team_size` members (a multiple of 64).
  TESSERA_HOST_DEVICE static constexpr std::size_t bytes_for(int team_size) {
    return ((kSeen + static_cast<std::size_t>(team_size)) * 8 + 63) / 64 * 64;
  }
  // The first word, or null when the team has no workspace large enough to hold them.
  TESSERA_HOST_DEVICE static std::uint64_t* words(const Team& team) {
    if (team.workspace == nullptr || team.workspace_bytes < bytes_for(team.size)) return nullptr;
    return reinterpret_cast<std::uint64_t*>(static_cast<unsigned char*>(team.workspace) +
                                            team.workspace_bytes - bytes_for(team.size));
  }
};

}  // namespace tessera::device
