/* Misuse that OpenSHMEM cannot report through a return value ends the job with a message
 * starting "tessera shmem:". PE 0 makes the mistake named by argv[1]; the other PEs wait in a
 * barrier and are ended by the launcher.
 *   put-static   shmem_putmem to a static array (run with TESSERA_SHMEM_STATIC=0: not symmetric)
 *   get-stack    shmem_long_get from a stack variable
 *   amo-malloc   shmem_int_atomic_inc on malloc'd memory
 *   static-overrun  shmem_putmem to a static array running past the executable's data
 *   static-unmapped shmem_int_p to a global on PE 1, whose data is not mapped and no network
 *                   proxy runs (TESSERA_P2P=0 TESSERA_FABRIC=off)
 *   static-layout   shmem_int_atomic_inc on a global, with PE 1 running shmem_error_proc_padded
 *                   (this file with a larger .bss: the PEs' data segments differ)
 *   bad-pe       shmem_int_p to PE n_pes
 *   bad-cmp      shmem_int_wait_until with comparison 42
 *   wait-timeout shmem_int_wait_until that never holds (run with TESSERA_TIMEOUT=1)
 *   before-init  shmem_my_pe before shmem_init
 *   ctx-destroyed   shmem_ctx_int_p on a context after shmem_ctx_destroy
 *   ctx-team-pe     shmem_ctx_int_p to PE 1 of a one-PE team's context
 *   lock-stack      shmem_set_lock on a stack long (not symmetric) */
#include <stdlib.h>
#include <string.h>

#include "tessera/shmem.h"

static char static_buffer[64];
int global_counter;
#ifdef TESSERA_TEST_PADDED
char tessera_test_padding[1 << 20]; /* a larger .bss than shmem_error_proc's */
#endif

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "";
  if (strcmp(mode, "before-init") == 0) {
    shmem_my_pe();
    return 0;
  }
  shmem_init();
  char* heap = (char*)shmem_calloc(64, 1);
  int* ivar = (int*)shmem_calloc(1, sizeof(int));
  long local = 0;
  if (shmem_my_pe() == 0) {
    if (strcmp(mode, "put-static") == 0) shmem_putmem(static_buffer, heap, 16, 0);
    if (strcmp(mode, "get-stack") == 0) shmem_long_get(&local, &local, 1, 0);
    if (strcmp(mode, "amo-malloc") == 0) {
      int* mine = (int*)malloc(sizeof(int));
      shmem_int_atomic_inc(mine, 0);
      free(mine);
    }
    if (strcmp(mode, "static-overrun") == 0)
      shmem_putmem(static_buffer, heap, (size_t)1 << 40, 0); /* checked before any byte moves */
    if (strcmp(mode, "static-unmapped") == 0) shmem_int_p(&global_counter, 1, 1);
    if (strcmp(mode, "static-layout") == 0) shmem_int_atomic_inc(&global_counter, 1);
    if (strcmp(mode, "bad-pe") == 0) shmem_int_p(ivar, 1, shmem_n_pes());
    if (strcmp(mode, "bad-cmp") == 0) shmem_int_wait_until(ivar, 42, 1);
    if (strcmp(mode, "wait-timeout") == 0) shmem_int_wait_until(ivar, SHMEM_CMP_EQ, 1);
    if (strcmp(mode, "ctx-destroyed") == 0) {
      shmem_ctx_t ctx = SHMEM_CTX_INVALID;
      shmem_ctx_create(0, &ctx);
      shmem_ctx_destroy(ctx);
      shmem_ctx_int_p(ctx, ivar, 1, 0);
    }
    if (strcmp(mode, "ctx-team-pe") == 0) {
      shmem_team_t alone = SHMEM_TEAM_INVALID;
      shmem_ctx_t ctx = SHMEM_CTX_INVALID;
      shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, 1, NULL, 0, &alone);
      shmem_team_create_ctx(alone, 0, &ctx);
      shmem_ctx_int_p(ctx, ivar, 1, 1);
    }
    if (strcmp(mode, "lock-stack") == 0) shmem_set_lock(&local);
  }
  shmem_barrier_all();
  shmem_finalize();
  return (int)local; /* reached only when no mistake was made */
}
