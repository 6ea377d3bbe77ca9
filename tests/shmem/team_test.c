/* Teams: split the world into even and odd PEs, split again, translate PE numbers between
 * teams, the predefined teams, invalid arguments and handles, and communication addressed by
 * team-relative numbers, and shmem_team_sync within each team. */
#include "shmem_check.h"

int main(void) {
  shmem_init();
  const int me = shmem_my_pe(), n = shmem_n_pes();
  shmem_team_t evens = SHMEM_TEAM_INVALID, odds = SHMEM_TEAM_INVALID;
  shmem_team_config_t config = {0};
  const int n_evens = (n + 1) / 2, n_odds = n / 2;

  check(shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 2, n_evens, NULL, 0, &evens) == 0,
        "split evens failed");
  config.num_contexts = 3;
  if (n_odds > 0) {
    check(shmem_team_split_strided(SHMEM_TEAM_WORLD, 1, 2, n_odds, &config, SHMEM_TEAM_NUM_CONTEXTS,
                                   &odds) == 0,
          "split odds failed");
  }
  shmem_team_t mine = me % 2 == 0 ? evens : odds;
  shmem_team_t other = me % 2 == 0 ? odds : evens;
  check(mine != SHMEM_TEAM_INVALID, "no handle for this PE's own team");
  check(other == SHMEM_TEAM_INVALID, "a handle for a team this PE is not in");
  check(shmem_team_my_pe(mine) == me / 2, "team_my_pe %d, expected %d", shmem_team_my_pe(mine),
        me / 2);
  check(shmem_team_n_pes(mine) == (me % 2 == 0 ? n_evens : n_odds), "team_n_pes %d",
        shmem_team_n_pes(mine));
  for (int i = 0; i < shmem_team_n_pes(mine); ++i) {
    const int world = shmem_team_translate_pe(mine, i, SHMEM_TEAM_WORLD);
    check(world == 2 * i + me % 2, "translate team PE %d to world: %d", i, world);
    check(shmem_team_translate_pe(SHMEM_TEAM_WORLD, world, mine) == i,
          "translate world PE %d back: %d", world,
          shmem_team_translate_pe(SHMEM_TEAM_WORLD, world, mine));
  }
  check(shmem_team_translate_pe(SHMEM_TEAM_WORLD, me ^ 1, mine) == -1 || (me ^ 1) >= n,
        "a PE of the other parity translated into this team");
  check(shmem_team_translate_pe(mine, shmem_team_n_pes(mine), SHMEM_TEAM_WORLD) == -1,
        "translate of a PE past the team's end is not -1");
  if (me % 2 == 1) {
    shmem_team_config_t got = {0};
    check(shmem_team_get_config(mine, SHMEM_TEAM_NUM_CONTEXTS, &got) == 0 && got.num_contexts == 3,
          "get_config: num_contexts %d, expected 3", got.num_contexts);
  }

  /* A split of a split: the first and last even PEs (team numbers 0 and n_evens - 1). */
  if (me % 2 == 0) {
    shmem_team_t ends = SHMEM_TEAM_INVALID;
    const int stride = n_evens > 1 ? n_evens - 1 : 1;
    const int size = n_evens > 1 ? 2 : 1;
    check(shmem_team_split_strided(evens, 0, stride, size, NULL, 0, &ends) == 0,
          "split of evens failed");
    const int my_even = me / 2;
    const int is_end = my_even == 0 || my_even == n_evens - 1;
    check((ends != SHMEM_TEAM_INVALID) == is_end, "ends membership wrong for PE %d", me);
    if (ends != SHMEM_TEAM_INVALID) {
      const int last_world = 2 * (n_evens - 1);
      check(shmem_team_translate_pe(ends, size - 1, SHMEM_TEAM_WORLD) == last_world,
            "ends: last member is world PE %d, expected %d",
            shmem_team_translate_pe(ends, size - 1, SHMEM_TEAM_WORLD), last_world);
      check(shmem_team_translate_pe(ends, 0, evens) == 0, "ends -> evens translation");
      shmem_team_destroy(ends);
    }
  }

  /* Invalid requests: nonzero return, SHMEM_TEAM_INVALID handle. */
  shmem_team_t bad = SHMEM_TEAM_WORLD;
  check(shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, n + 1, NULL, 0, &bad) != 0 &&
            bad == SHMEM_TEAM_INVALID,
        "a team larger than its parent was created");
  bad = SHMEM_TEAM_WORLD;
  check(shmem_team_split_strided(SHMEM_TEAM_INVALID, 0, 1, 1, NULL, 0, &bad) != 0 &&
            bad == SHMEM_TEAM_INVALID,
        "a split of SHMEM_TEAM_INVALID succeeded");
  check(shmem_team_my_pe(SHMEM_TEAM_INVALID) == -1, "team_my_pe(INVALID) is not -1");
  check(shmem_team_n_pes(SHMEM_TEAM_INVALID) == -1, "team_n_pes(INVALID) is not -1");
  check(shmem_team_translate_pe(SHMEM_TEAM_INVALID, 0, SHMEM_TEAM_WORLD) == -1,
        "translate from INVALID is not -1");

  int* inbox = (int*)shmem_calloc(1, sizeof(int));

  /* SHMEM_TEAM_SHARED: this PE and the PEs it maps (all of them, on one machine). */
  const int shared_me = shmem_team_my_pe(SHMEM_TEAM_SHARED);
  check(shared_me >= 0, "not a member of SHMEM_TEAM_SHARED");
  check(shmem_team_translate_pe(SHMEM_TEAM_SHARED, shared_me, SHMEM_TEAM_WORLD) == me,
        "SHMEM_TEAM_SHARED's numbering does not lead back to this PE");
  for (int i = 0; i < shmem_team_n_pes(SHMEM_TEAM_SHARED); ++i) {
    const int world = shmem_team_translate_pe(SHMEM_TEAM_SHARED, i, SHMEM_TEAM_WORLD);
    check(world >= 0 && shmem_ptr(inbox, world) != NULL,
          "SHMEM_TEAM_SHARED member %d (world PE %d) is not load/store reachable", i, world);
  }

  /* Team-relative addressing: each team member puts its world number to its team neighbour. */
  const int team_n = shmem_team_n_pes(mine), team_me = shmem_team_my_pe(mine);
  const int target = shmem_team_translate_pe(mine, (team_me + 1) % team_n, SHMEM_TEAM_WORLD);
  shmem_int_p(inbox, me, target);
  shmem_barrier_all();
  const int from = shmem_team_translate_pe(mine, (team_me + team_n - 1) % team_n, SHMEM_TEAM_WORLD);
  check(*inbox == from, "team ring: got %d, expected %d", *inbox, from);
  shmem_free(inbox);

  /* shmem_team_sync: each member stores its round number, syncs with its team only, and then
   * reads every member's store; a second sync keeps the next round's store out of this read. */
  long* stamp = (long*)shmem_calloc(1, sizeof(long));
  for (long round = 1; round <= 40; ++round) {
    *stamp = round * 100 + me;
    check(shmem_team_sync(mine) == 0, "shmem_team_sync failed");
    for (int i = 0; i < team_n; ++i) {
      const int world = shmem_team_translate_pe(mine, i, SHMEM_TEAM_WORLD);
      const long seen = shmem_long_g(stamp, world);
      check(seen == round * 100 + world, "team_sync round %ld: PE %d's stamp %ld", round, world,
            seen);
    }
    shmem_team_sync(mine);
  }
  check(shmem_team_sync(SHMEM_TEAM_INVALID) != 0, "shmem_team_sync(INVALID) returned 0");
  check(shmem_team_sync(SHMEM_TEAM_WORLD) == 0, "shmem_team_sync(WORLD) failed");
  shmem_free(stamp);

  shmem_team_destroy(evens);
  shmem_team_destroy(odds);
  shmem_team_destroy(SHMEM_TEAM_INVALID);
  const int status = finish("teams");
  shmem_finalize();
  return status;
}
