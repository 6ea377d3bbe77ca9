// What the team-based collectives share: the opening and closing syncs, reading a member's
// symmetric source, and the private landing area of an in-place call.
#pragma once

#include <cstddef>
#include <cstring>
#include <vector>

#include "shmem/rma.hpp"
#include "shmem/state.hpp"
#include "shmem/teams.hpp"

namespace tessera::shmem {

// The deprecated active set PE_start + i * 2^logPE_stride (i < PE_size) as a team object (a
// value: the team routines take its address). Ends the job when the set leaves the job or does
// not hold this PE.
tessera_shmem_team active_set(const State& s, const char* routine, int start, int log_stride,
                              int size);

// The world PE of team member `rank`.
inline int world_pe(const tessera_shmem_team& team, int rank) { return team.team.pe(rank); }

// Ends the job unless [p, p + bytes) is symmetric; nothing to check for an empty range.
inline void require_symmetric_range(const State& s, const char* routine, const void* p,
                                    std::size_t bytes, const char* role) {
  if (bytes != 0) symmetric_ctx(s, routine, p, bytes, role);
}

// Copies `bytes` of the symmetric object at `source` on world PE `pe` into local memory `to`:
// by load/store where `pe` is mapped, else through the network proxy (a blocking get).
inline void read_member(const State& s, const char* routine, void* to, const void* source,
                        std::size_t bytes, int pe) {
  if (bytes == 0) return;
  if (const void* mapped = ctx_of(s, source).ptr(source, pe); mapped != nullptr) {
    std::memmove(to, mapped, bytes);
    return;
  }
  transfer<1>(routine, Direction::get, to, source, bytes, 1, 1, pe, false);
}

// Where a collective assembles this PE's result. Peers read this PE's `source` until the closing
// sync, so when `dest` overlaps it the result goes to a private copy of dest (gaps of a strided
// dest included), which finish() stores to dest once no peer reads source any more. Otherwise
// it goes to dest directly.
class Landing {
 public:
  Landing(void* dest, std::size_t dest_bytes, const void* source, std::size_t source_bytes)
      : dest_(static_cast<char*>(dest)), bytes_(dest_bytes) {
    const auto* d = static_cast<const char*>(dest);
    const auto* src = static_cast<const char*>(source);
    const bool overlap =
        dest_bytes != 0 && source_bytes != 0 && d < src + source_bytes && src < d + dest_bytes;
    if (overlap) staged_.assign(d, d + dest_bytes);
  }
  // The address that stands for dest[0].
  char* at() { return staged_.empty() ? dest_ : staged_.data(); }
  // After the closing sync: the staged result to dest.
  void finish() {
    if (!staged_.empty()) std::memcpy(dest_, staged_.data(), bytes_);
  }

 private:
  char* dest_;
  std::size_t bytes_;
  std::vector<char> staged_;
};

// The shape of every team collective, once the caller has checked its arguments (a usable team
// among them): the opening sync (every member's stores to its source are visible), body()
// reading the members' sources into the Landing it returns, the closing sync (no member reads
// this PE's source any more), then the landing's result to dest.
template <class Body>
int run_collective(State& s, const char* routine, const tessera_shmem_team& team, Body body) {
  team_sync(s, team, routine);
  Landing landing = body();
  team_sync(s, team, routine);
  landing.finish();
  return 0;
}

}  // namespace tessera::shmem
