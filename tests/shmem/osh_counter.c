/* The plain OpenSHMEM program of issue 20's acceptance, built with oshcc and run with
 * oshrun -np 4: <shmem.h>, every PE increments one counter on PE 0. (The counter is a heap
 * object: global and static symmetric data are not provided yet, see docs/shmem.md.) */
#include <shmem.h>
#include <stdio.h>

int main(void) {
  shmem_init();
  long* counter = (long*)shmem_calloc(1, sizeof(long));
  shmem_long_atomic_inc(counter, 0);
  shmem_barrier_all();
  int ok = 1;
  if (shmem_my_pe() == 0) {
    ok = *counter == shmem_n_pes();
    printf("osh_counter: %ld increments from %d PEs: %s\n", *counter, shmem_n_pes(),
           ok ? "verified" : "WRONG");
  }
  shmem_free(counter);
  shmem_finalize();
  return ok ? 0 : 1;
}
