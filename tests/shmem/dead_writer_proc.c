/* A shmem_long_wait_until whose writer died: PE 1 SIGKILLs itself instead of setting PE 0's
 * variable, and PE 0's wait must end with the writer named as lost (the job's abort word, set by
 * the peer watch) well inside TESSERA_TIMEOUT, not run into the timeout. Run with 2 PEs. */
#include <signal.h>

#include "tessera/shmem.h"

int main(void) {
  shmem_init();
  long* ivar = (long*)shmem_calloc(1, sizeof(long));
  shmem_barrier_all();
  if (shmem_my_pe() == 1) raise(SIGKILL);
  if (shmem_my_pe() == 0) shmem_long_wait_until(ivar, SHMEM_CMP_EQ, 1);
  shmem_finalize();
  return 0; /* reached only if the wait was satisfied, which no PE does */
}
