/* Distributed locks (OpenSHMEM 1.5 section 9.11): every PE increments a counter on PE 0 with a
 * non-atomic get, add and put inside shmem_set_lock / shmem_clear_lock, so a lock that lets two
 * PEs in at once loses increments; then shmem_test_lock: refused while another PE holds the
 * lock, taken once it is free. */
#include <stdlib.h>

#include "shmem_check.h"

int main(int argc, char** argv) {
  shmem_init();
  const int me = shmem_my_pe();
  const int n = shmem_n_pes();
  const int rounds = argc > 1 ? atoi(argv[1]) : 200;
  long* lock = (long*)shmem_calloc(1, sizeof(long));
  long* counter = (long*)shmem_calloc(1, sizeof(long));
  int* held = (int*)shmem_calloc(1, sizeof(int));

  for (int r = 0; r < rounds; ++r) {
    shmem_set_lock(lock);
    const long seen = shmem_long_g(counter, 0);
    shmem_long_p(counter, seen + 1, 0);
    shmem_clear_lock(lock);
  }
  shmem_barrier_all();
  if (me == 0) {
    check(*counter == (long)rounds * n,
          "counter is %ld after %d rounds on %d PEs: the lock let "
          "PEs in together",
          *counter, rounds, n);
  }

  /* PE 0 holds the lock; the others' test_lock must fail until it clears it. */
  if (me == 0) shmem_set_lock(lock);
  shmem_barrier_all();
  if (me != 0) check(shmem_test_lock(lock) == 1, "test_lock took a lock PE 0 holds");
  shmem_barrier_all();
  if (me == 0) shmem_clear_lock(lock);
  shmem_barrier_all();
  /* Every PE takes it by test_lock in turn (bounded: each try either takes it or sees a holder
   * that releases it). */
  int tries = 0;
  while (shmem_test_lock(lock) != 0) {
    ++tries;
    check(tries < 100000000, "test_lock never succeeded");
    if (tries >= 100000000) break;
  }
  const int inside = shmem_int_atomic_fetch_inc(held, 0);
  check(inside == 0, "%d other PEs inside the lock with this one", inside);
  shmem_int_atomic_add(held, -1, 0);
  shmem_clear_lock(lock);
  shmem_barrier_all();

  const int status = finish("lock");
  shmem_free(held);
  shmem_free(counter);
  shmem_free(lock);
  shmem_finalize();
  return status;
}
