/* hello_shmem: the smallest OpenSHMEM program, built by tessera-shmemcc (as C) and
 * tessera-shmemcxx (as C++): each PE puts its number to its right neighbour and checks what
 * arrived from its left. */
#include <stdio.h>

#include "tessera/shmem.h"

int main(void) {
  shmem_init();
  const int me = shmem_my_pe();
  const int n = shmem_n_pes();
  int* inbox = (int*)shmem_malloc(sizeof(int));
  *inbox = -1;
  shmem_barrier_all();
  shmem_int_p(inbox, me, (me + 1) % n);
  shmem_barrier_all();
  const int left = (me + n - 1) % n;
  const int ok = *inbox == left;
  printf("hello_shmem: PE %d of %d: %s (got %d, expected %d)\n", me, n, ok ? "verified" : "WRONG",
         *inbox, left);
  shmem_free(inbox);
  shmem_finalize();
  return ok ? 0 : 1;
}
