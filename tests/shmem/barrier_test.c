/* shmem_barrier_all and shmem_sync_all: local stores before either are visible to every PE
 * after it; barrier_all also completes outstanding _nbi puts. Many rounds, so a barrier that
 * lets one PE run ahead is caught. */
#include "shmem_check.h"

int main(void) {
  shmem_init();
  const int me = shmem_my_pe(), n = shmem_n_pes();
  const int right = (me + 1) % n, left = (me + n - 1) % n;
  long* mine = (long*)shmem_calloc(1, sizeof(long));
  long* inbox = (long*)shmem_calloc(64, sizeof(long));
  long payload[64];

  for (long round = 1; round <= 100; ++round) {
    *mine = round * 10 + me; /* a local store */
    if (round % 2 == 0) {
      shmem_barrier_all();
    } else {
      shmem_sync_all();
    }
    for (int pe = 0; pe < n; ++pe) {
      const long seen = shmem_long_g(mine, pe);
      check(seen == round * 10 + pe, "round %ld: PE %d's value %ld, expected %ld", round, pe, seen,
            round * 10 + pe);
    }
    /* Nobody stores the next round's value before everyone has read this one. */
    shmem_sync_all();
  }

  for (long round = 1; round <= 50; ++round) {
    for (int i = 0; i < 64; ++i) payload[i] = round * 1000 + me * 64 + i;
    shmem_long_put_nbi(inbox, payload, 64, right);
    shmem_barrier_all(); /* completes the nbi put on every PE */
    int wrong = 0;
    for (int i = 0; i < 64; ++i) wrong += inbox[i] != round * 1000 + left * 64 + i;
    check(wrong == 0, "round %ld: %d elements of the nbi put missing after barrier_all", round,
          wrong);
    shmem_barrier_all();
  }

  shmem_free(inbox);
  shmem_free(mine);
  const int status = finish("barrier_all/sync_all");
  shmem_finalize();
  return status;
}
