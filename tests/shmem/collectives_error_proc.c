/* Misuse of the collectives that ends the job (run by tests/shmem/collectives.cmake under
 * mpirun -np 2, each mode expecting its "tessera shmem:" message). */
#include <string.h>

#include "tessera/shmem.h"

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "";
  shmem_init();
  const int n = shmem_n_pes();
  long* heap = (long*)shmem_calloc(4, sizeof(long));
  long local[4] = {0, 0, 0, 0};
  long psync[SHMEM_SYNC_SIZE] = {SHMEM_SYNC_VALUE};
  if (strcmp(mode, "broadcast-stack") == 0) {
    shmem_long_broadcast(SHMEM_TEAM_WORLD, local, heap, 4, 0); /* dest not symmetric */
  } else if (strcmp(mode, "reduce-stack-source") == 0) {
    shmem_long_sum_reduce(SHMEM_TEAM_WORLD, heap, local, 4); /* source not symmetric */
  } else if (strcmp(mode, "alltoall-past-heap") == 0) {
    shmem_long_alltoall(SHMEM_TEAM_WORLD, heap, heap, (size_t)1 << 40); /* past the heap */
  } else if (strcmp(mode, "sync-outside-set") == 0) {
    shmem_sync(n, 0, 1, psync); /* a set past the last PE */
  } else if (strcmp(mode, "barrier-bad-stride") == 0) {
    shmem_barrier(0, -1, n, psync); /* logPE_stride below 0 */
  } else if (strcmp(mode, "sync-not-member") == 0) {
    if (shmem_my_pe() == 0) shmem_sync(1, 0, n - 1, psync); /* PE 0 is not in PEs 1 .. n-1 */
  }
  shmem_barrier_all();
  shmem_free(heap);
  shmem_finalize();
  return 0;
}
