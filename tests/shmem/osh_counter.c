/* The plain OpenSHMEM program of issue 20's acceptance, built with oshcc and run with
 * oshrun -np 4: <shmem.h>, every PE increments a global counter on PE 0 (global and static
 * variables are symmetric objects). */
#include <shmem.h>
#include <stdio.h>

long counter;

int main(void) {
  shmem_init();
  shmem_long_atomic_inc(&counter, 0);
  shmem_barrier_all();
  int ok = 1;
  if (shmem_my_pe() == 0) {
    ok = counter == shmem_n_pes();
    printf("osh_counter: %ld increments from %d PEs: %s\n", counter, shmem_n_pes(),
           ok ? "verified" : "WRONG");
  }
  shmem_finalize();
  return ok ? 0 : 1;
}
