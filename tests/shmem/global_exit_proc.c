/* shmem_global_exit(status) ends the job with `status` (OpenSHMEM 1.5 section 9.1.5): the last
 * PE calls it with argv[1] while the others wait in a barrier it never joins. Run under mpirun,
 * tessera-run and alone; the launcher's exit status must be `status`.
 * With argv[1] "alloc-log", the failed allocations instead return NULL (logged at
 * TESSERA_DEBUG=INFO) and the program exits 0. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tessera/shmem.h"

int main(int argc, char** argv) {
  shmem_init();
  if (argc > 1 && strcmp(argv[1], "alloc-log") == 0) {
    void* odd = shmem_align(3, 64);
    void* huge = shmem_malloc((size_t)1 << 40);
    void* none = shmem_malloc(0);
    const int ok = odd == NULL && huge == NULL && none == NULL;
    shmem_finalize();
    return ok ? 0 : 1;
  }
  const int status = argc > 1 ? atoi(argv[1]) : 0;
  if (shmem_my_pe() == shmem_n_pes() - 1) {
    printf("PE %d: shmem_global_exit(%d)\n", shmem_my_pe(), status);
    shmem_global_exit(status);
  }
  shmem_barrier_all(); /* never completes: the last PE left */
  return 99;
}
