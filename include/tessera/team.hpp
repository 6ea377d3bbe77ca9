// Teams: strided sets of world PEs that collectives (tessera::ops::all_reduce, ...) run over.
// A Team is the device struct <tessera/device/team.hpp>: trivially copyable, passed to kernels
// by value, with n_pes(), pe(i), rank_of(pe) and my_rank. The makers below build one and give it
// its symmetric workspace (the signal words and staging its collectives use).
#pragma once

#include "tessera/device/team.hpp"
#include "tessera/runtime.hpp"

namespace tessera {

using Team = device::Team;

// Every PE of the job, ranked by world PE.
//
// All makers are collective over every PE of the job, members and non-members alike, in the
// same order on every PE: each allocates the team's workspace (about 2 MiB: the all-reduce
// staging of device::ops::AllReduceWorkspace::bytes_for plus 128 bytes per PE of agreement
// records, then the device team barrier's words, device::TeamBarrierWords) from the symmetric
// heap, zeroed and held until finalize, so make teams once and keep them. A PE that is not a
// member gets a Team with my_rank == -1 (it may answer pe()/rank_of() but not run a collective
// on it). Throws like Runtime::malloc (out_of_memory, or invalid_argument when PEs make
// different calls).
Team team_world(Runtime& rt);

// The PEs of this PE's node (Runtime::node). Throws Error(invalid_argument) when a node's PEs
// are not evenly spaced world PEs (a launcher that interleaves nodes unevenly), since a Team is
// strided.
Team team_node(Runtime& rt);

// The members of `parent` of ranks start, start + stride, ..., size of them (OpenSHMEM's
// shmem_team_split_strided). Every PE passes the same arguments. Throws Error(invalid_argument)
// when size < 1, start < 0, stride < 1, or the last rank lies outside the parent.
Team team_split_strided(Runtime& rt, const Team& parent, int start, int stride, int size);

// The bytes of a team's workspace (what every maker above allocates).
std::size_t team_workspace_size(const Runtime& rt);

// Members only, for teams made after the fact (a torch.distributed sub-group, whose non-members
// make no call): world PEs start, start + stride, ..., size of them, over `block`, which the
// caller reserved earlier with a collective allocation so that it lies at the same offset on every
// member, and which no other team uses. Zeroes this PE's copy of the workspace and returns: the
// members must synchronize (by any means) after every one has made it and before any runs a
// collective on it. Throws Error(invalid_argument) when the PEs do not lie in the job, this PE is
// not one of them, or block is not team_workspace_size bytes of heap, 64-byte aligned.
Team team_over_block(Runtime& rt, int start, int stride, int size, void* block, std::size_t bytes);

}  // namespace tessera
