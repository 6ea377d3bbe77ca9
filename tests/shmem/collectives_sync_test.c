/* shmem_team_sync on the world and on a strided team (through the C11 name shmem_sync(team)),
 * and the deprecated active-set forms shmem_sync and shmem_barrier on the even and the odd
 * world PEs (logPE_stride 1) and on every PE (logPE_stride 0): after the sync each member sees
 * every member's store from before it; after shmem_barrier also every member's puts. pSync may
 * be any array (even a local one). Both sets run at once on disjoint PEs. */
#include "collectives_check.h"

int main(void) {
  shmem_init();
  make_collective_teams();
  const int me = shmem_my_pe(), n = shmem_n_pes();
  long* stamp = (long*)shmem_calloc(1, sizeof(long));
  long* inbox = (long*)shmem_calloc((size_t)n, sizeof(long));
  long psync[SHMEM_SYNC_SIZE] = {SHMEM_SYNC_VALUE};
  long pbarrier[SHMEM_BARRIER_SYNC_SIZE] = {SHMEM_SYNC_VALUE};

  for (long round = 1; round <= 20; ++round) {
    for (int c = 0; c < 2; ++c) {
      shmem_team_t team = collective_teams[c];
      *stamp = round * 1000 + c * 100 + me;
      check(shmem_sync(team) == 0, "shmem_sync(team) on %s failed", collective_team_names[c]);
      for (int r = 0; r < shmem_team_n_pes(team); ++r) {
        const int pe = world_of(team, r);
        const long seen = shmem_long_g(stamp, pe);
        check(seen == round * 1000 + c * 100 + pe, "team sync round %ld on %s: PE %d's stamp %ld",
              round, collective_team_names[c], pe, seen);
      }
      check(shmem_team_sync(team) == 0, "shmem_team_sync failed");
    }

    /* Active sets: this PE's parity (start me % 2, stride 2^1), then all PEs (stride 2^0). */
    const int start = me % 2, size = start == 0 ? (n + 1) / 2 : n / 2;
    *stamp = round * 10 + me;
    shmem_sync(start, 1, size, psync);
    for (int i = 0; i < size; ++i) {
      const int pe = start + 2 * i;
      check(shmem_long_g(stamp, pe) == round * 10 + pe, "active-set sync round %ld: PE %d's stamp",
            round, pe);
    }
    shmem_sync(0, 0, n, psync);

    /* shmem_barrier completes the puts issued before it: each member puts to every member. */
    for (int i = 0; i < size; ++i) shmem_long_p(&inbox[me], round * 10 + me, start + 2 * i);
    shmem_barrier(start, 1, size, pbarrier);
    for (int i = 0; i < size; ++i) {
      const int pe = start + 2 * i;
      check(inbox[pe] == round * 10 + pe, "active-set barrier round %ld: put from PE %d is %ld",
            round, pe, inbox[pe]);
    }
    shmem_barrier(0, 0, n, pbarrier);
  }
  check(shmem_sync(SHMEM_TEAM_INVALID) != 0, "shmem_sync(SHMEM_TEAM_INVALID) returned 0");

  shmem_free(inbox);
  shmem_free(stamp);
  destroy_collective_teams();
  const int status = finish("team and active-set sync");
  shmem_finalize();
  return status;
}
