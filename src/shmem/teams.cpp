// Teams: strided sets of world PEs, the device API's Team (tessera/device/team.hpp), so a handle
// answers pe / rank_of / translate exactly as a device Team does. Creating one is local
// arithmetic on the parent's start and stride, so a split needs no communication. shmem_team_sync
// is a dissemination barrier over per-sender counters that every PE allocated at shmem_init, so it
// needs no per-team resources either.
#include "shmem/teams.hpp"

#include <vector>

#include "shmem/wait.hpp"

namespace {
tessera_shmem_team g_world;
tessera_shmem_team g_shared;
}  // namespace

extern "C" {
shmem_team_t const SHMEM_TEAM_WORLD = &g_world;
shmem_team_t const SHMEM_TEAM_SHARED = &g_shared;
}

namespace tessera::shmem {
namespace {

bool valid(shmem_team_t team) { return team != SHMEM_TEAM_INVALID && team->team.size > 0; }

// The strided team of `pes` (ascending world PEs, `me` among them) when they are evenly spaced,
// else the team of `me` alone: a Team is strided, and a one-PE team is always a correct
// SHMEM_TEAM_SHARED (its members must share memory, not every PE that does must be in it).
tessera::device::Team strided_or_self(const std::vector<int>& pes, int me) {
  tessera::device::Team t;
  t.start = me;
  t.size = 1;
  const int stride = pes.size() > 1 ? pes[1] - pes[0] : 1;
  bool even = stride >= 1;
  for (std::size_t i = 1; even && i < pes.size(); ++i) even = pes[i] - pes[i - 1] == stride;
  if (even && !pes.empty()) {
    t.start = pes.front();
    t.stride = stride;
    t.size = static_cast<int>(pes.size());
  }
  t.my_rank = t.rank_of(me);
  return t;
}

}  // namespace

bool usable_team(shmem_team_t team) { return valid(team) && team->team.my_rank >= 0; }

void init_predefined_teams(State& s) {
  const int me = s.ctx.my_pe;
  g_world = tessera_shmem_team{};
  g_shared = tessera_shmem_team{};
  g_world.predefined = g_shared.predefined = true;
  std::vector<int> shared;
  for (int pe = 0; pe < s.ctx.n_pes; ++pe) {
    const Transport t = s.runtime.transport(pe);
    if (t == Transport::self || t == Transport::mapped) shared.push_back(pe);
  }
  g_world.team.start = 0;
  g_world.team.stride = 1;
  g_world.team.size = s.ctx.n_pes;
  g_world.team.my_rank = me;
  g_shared.team = strided_or_self(shared, me);
  s.sync_counters = static_cast<std::uint64_t*>(
      s.runtime.calloc(static_cast<std::size_t>(s.ctx.n_pes), sizeof(std::uint64_t)));
  s.sync_consumed.assign(static_cast<std::size_t>(s.ctx.n_pes), 0);
  s.collect_count =
      static_cast<std::uint64_t*>(s.runtime.calloc(std::size_t{1}, sizeof(std::uint64_t)));
}

void release_predefined_teams() {
  g_world = tessera_shmem_team{};
  g_shared = tessera_shmem_team{};
  g_world.predefined = g_shared.predefined = true;
}

}  // namespace tessera::shmem

namespace tessera::shmem {

// Round k of the dissemination barrier: signal the member 2^k places ahead, wait for the one
// 2^k places behind; after ceil(log2 m) rounds every member has heard, directly or not, from
// every other. The signal is an atomic add with release and the wait an acquire load, so stores
// before the sync are visible after it.
void team_sync(State& s, const tessera_shmem_team& team, const char* routine) {
  const int me = s.ctx.my_pe;
  const int m = team.team.size;
  const int i = team.team.my_rank;
  for (int dist = 1; dist < m; dist *= 2) {
    const int to = team.team.pe((i + dist) % m);
    const int from = team.team.pe((i - dist + m) % m);
    guarded(routine,
            [&] { device::atomic_add(s.ctx, &s.sync_counters[me], std::uint64_t{1}, to); });
    const std::uint64_t expected = ++s.sync_consumed[static_cast<std::size_t>(from)];
    const std::uint64_t* counter = &s.sync_counters[from];
    spin_until(
        s, routine, [&] { return load_acquire(counter) >= expected; },
        [&] {
          return "PE " + std::to_string(from) + " (team PE " + std::to_string((i - dist + m) % m) +
                 ") never arrived: its sync count here is " +
                 std::to_string(load_acquire(counter)) + ", expected " + std::to_string(expected);
        });
  }
}

}  // namespace tessera::shmem

using tessera::shmem::die;
using tessera::shmem::state;
using tessera::shmem::valid;

extern "C" {

int shmem_team_my_pe(shmem_team_t team) {
  state("shmem_team_my_pe");
  return valid(team) ? team->team.my_rank : -1;
}

int shmem_team_n_pes(shmem_team_t team) {
  state("shmem_team_n_pes");
  return valid(team) ? team->team.n_pes() : -1;
}

int shmem_team_translate_pe(shmem_team_t src_team, int src_pe, shmem_team_t dest_team) {
  state("shmem_team_translate_pe");
  if (!valid(src_team) || !valid(dest_team)) return -1;
  return tessera::device::translate(src_team->team, src_pe, dest_team->team);
}

int shmem_team_split_strided(shmem_team_t parent_team, int start, int stride, int size,
                             const shmem_team_config_t* config, long config_mask,
                             shmem_team_t* new_team) {
  state("shmem_team_split_strided");
  if (new_team == nullptr) die("shmem_team_split_strided", "new_team is NULL");
  *new_team = SHMEM_TEAM_INVALID;
  if (!valid(parent_team) || parent_team->team.my_rank < 0) return -1;
  const long parent_size = parent_team->team.size;
  if (size < 1 || start < 0 || (size > 1 && stride < 1)) return -1;
  const long last =
      static_cast<long>(start) + static_cast<long>(size - 1) * (size > 1 ? stride : 0);
  if (last >= parent_size) return -1;

  auto team = new tessera_shmem_team{};
  // Member i is parent member start + i * stride, so world PE parent.pe(start) + i * stride *
  // parent.stride: strided again (a one-member team keeps stride 1).
  const tessera::device::Team& parent = parent_team->team;
  team->team.start = parent.pe(start);
  team->team.stride = size > 1 ? parent.stride * stride : 1;
  team->team.size = size;
  team->team.my_rank = team->team.rank_of(parent.pe(parent.my_rank));
  if ((config_mask & SHMEM_TEAM_NUM_CONTEXTS) != 0 && config != nullptr) {
    team->config.num_contexts = config->num_contexts;
  }
  if (team->team.my_rank < 0) {
    delete team;
    return 0;
  }
  *new_team = team;
  return 0;
}

int shmem_team_get_config(shmem_team_t team, long config_mask, shmem_team_config_t* config) {
  state("shmem_team_get_config");
  if (!valid(team) || config == nullptr) return -1;
  if ((config_mask & SHMEM_TEAM_NUM_CONTEXTS) != 0)
    config->num_contexts = team->config.num_contexts;
  return 0;
}

int shmem_team_sync(shmem_team_t team) {
  tessera::shmem::State& s = state("shmem_team_sync");
  if (!tessera::shmem::usable_team(team)) return -1;
  tessera::shmem::team_sync(s, *team, "shmem_team_sync");
  return 0;
}

void shmem_team_destroy(shmem_team_t team) {
  state("shmem_team_destroy");
  if (team == SHMEM_TEAM_INVALID) return;
  if (team->predefined) {
    die("shmem_team_destroy",
        "SHMEM_TEAM_WORLD and SHMEM_TEAM_SHARED are predefined and cannot be destroyed");
  }
  delete team;
}

int shmem_team_split_2d(shmem_team_t parent_team, int xrange,
                        const shmem_team_config_t* xaxis_config, long xaxis_mask,
                        shmem_team_t* xaxis_team, const shmem_team_config_t* yaxis_config,
                        long yaxis_mask, shmem_team_t* yaxis_team) {
  const char* routine = "shmem_team_split_2d";
  state(routine);
  if (xaxis_team == nullptr || yaxis_team == nullptr) die(routine, "a team handle pointer is NULL");
  *xaxis_team = SHMEM_TEAM_INVALID;
  *yaxis_team = SHMEM_TEAM_INVALID;
  if (!tessera::shmem::usable_team(parent_team) || xrange < 1) return -1;
  // Parent PE r sits at column r % xrange of row r / xrange. Both splits are strided sets of the
  // parent, and split_strided is local arithmetic, so each PE makes just its own row and column.
  const int n = parent_team->team.size;
  const int x = xrange > n ? n : xrange;
  const int r = parent_team->team.my_rank;
  const int row_start = r - r % x;
  const int row_size = row_start + x > n ? n - row_start : x;
  const int column_start = r % x;
  const int column_size = (n - column_start + x - 1) / x;
  if (shmem_team_split_strided(parent_team, row_start, 1, row_size, xaxis_config, xaxis_mask,
                               xaxis_team) != 0 ||
      shmem_team_split_strided(parent_team, column_start, x, column_size, yaxis_config, yaxis_mask,
                               yaxis_team) != 0) {
    shmem_team_destroy(*xaxis_team);
    *xaxis_team = SHMEM_TEAM_INVALID;
    return -1;
  }
  return 0;
}

void* shmem_team_ptr(shmem_team_t team, const void* dest, int pe) {
  state("shmem_team_ptr");
  if (!valid(team) || pe < 0 || pe >= team->team.size) return nullptr;
  return shmem_ptr(dest, team->team.pe(pe));
}

}  // extern "C"
