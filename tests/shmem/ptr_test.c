/* shmem_addr_accessible and shmem_ptr: heap objects and static and global data are accessible on
 * every PE (peers on other nodes through the network proxy) and can be loaded and stored
 * directly through shmem_ptr on exactly the peers of SHMEM_TEAM_SHARED, which map them; stack
 * and malloc'd data are not symmetric and give 0 / NULL. */
#include <stdlib.h>

#include "shmem_check.h"

static int static_counter;
int global_value = 3;

int main(void) {
  shmem_init();
  const int me = shmem_my_pe(), n = shmem_n_pes();
  const int right = (me + 1) % n, left = (me + n - 1) % n;
  long* heap = (long*)shmem_calloc(4, sizeof(long));
  int on_stack = 0;
  int* private_block = (int*)malloc(sizeof(int));

  for (int pe = 0; pe < n; ++pe) {
    const int shared = shmem_team_translate_pe(SHMEM_TEAM_WORLD, pe, SHMEM_TEAM_SHARED) >= 0;
    check(shmem_addr_accessible(heap, pe) == 1, "heap object not accessible on PE %d", pe);
    check(shmem_addr_accessible(&heap[3], pe) == 1, "heap[3] not accessible on PE %d", pe);
    check(shmem_addr_accessible(&static_counter, pe) == 1,
          "static data not accessible on PE %d, which is %s", pe,
          shared ? "mapped" : "on another node");
    check(shmem_addr_accessible(&global_value, pe) == 1, "global data on PE %d", pe);
    check(shmem_addr_accessible(&on_stack, pe) == 0, "stack data accessible on PE %d", pe);
    check(shmem_addr_accessible(private_block, pe) == 0, "malloc'd data accessible on PE %d", pe);
    check((shmem_ptr(&static_counter, pe) != NULL) == shared, "shmem_ptr of static data on PE %d",
          pe);
    check(shmem_ptr(private_block, pe) == NULL, "shmem_ptr of malloc'd data is not NULL");
  }
  check(shmem_ptr(&global_value, me) == (void*)&global_value,
        "shmem_ptr of a global on this PE is not its address");
  check(shmem_addr_accessible(heap, n) == 0, "accessible on PE n_pes");
  check(shmem_addr_accessible(heap, -1) == 0, "accessible on PE -1");
  check(shmem_ptr(heap, n) == NULL, "shmem_ptr on PE n_pes is not NULL");
  check(shmem_ptr(heap, me) == (void*)heap, "shmem_ptr to this PE is not the address itself");

  /* Peers in SHMEM_TEAM_SHARED (all of them on one machine) are mapped: store through the
   * pointer, read it after a barrier. Peers on other nodes give NULL. */
  const int right_shared = shmem_team_translate_pe(SHMEM_TEAM_WORLD, right, SHMEM_TEAM_SHARED);
  const int left_shared = shmem_team_translate_pe(SHMEM_TEAM_WORLD, left, SHMEM_TEAM_SHARED);
  long* peer = (long*)shmem_ptr(&heap[1], right);
  check((peer != NULL) == (right_shared >= 0), "shmem_ptr to PE %d is %p, but it is %s", right,
        (void*)peer, right_shared >= 0 ? "in SHMEM_TEAM_SHARED" : "on another node");
  if (peer != NULL) *peer = 1000 + me;
  shmem_barrier_all();
  if (left_shared >= 0) {
    check(heap[1] == 1000 + left, "store through shmem_ptr: heap[1] = %ld, expected %d", heap[1],
          1000 + left);
  }

  free(private_block);
  shmem_free(heap);
  const int status = finish("addr_accessible/ptr");
  shmem_finalize();
  return status;
}
