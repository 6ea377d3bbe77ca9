/* Memory management: shmem_malloc gives the same object on every PE; shmem_calloc zeroes (even a
 * block reused after free); shmem_align aligns; realloc keeps contents; size 0 and impossible
 * requests return NULL on every PE. */
#include <stdint.h>
#include <string.h>

#include "shmem_check.h"

int main(void) {
  shmem_init();
  const int me = shmem_my_pe();
  const int n = shmem_n_pes();
  const int right = (me + 1) % n;
  const int left = (me + n - 1) % n;

  /* Symmetric: a put to `box` on the right neighbour lands in that PE's `box`. */
  int* box = (int*)shmem_malloc(4 * sizeof(int));
  check(box != NULL, "shmem_malloc(16) returned NULL");
  check((uintptr_t)box % 64 == 0, "shmem_malloc result %p is not 64-byte aligned", (void*)box);
  box[0] = -1;
  shmem_barrier_all();
  shmem_int_p(&box[0], me, right);
  shmem_barrier_all();
  check(box[0] == left, "box holds %d, expected %d from the left neighbour", box[0], left);

  /* calloc zeroes a block that held data before it was freed. */
  const size_t big = (size_t)1 << 20;
  unsigned char* dirty = (unsigned char*)shmem_malloc(big);
  check(dirty != NULL, "shmem_malloc(1 MiB) returned NULL");
  memset(dirty, 0xab, big);
  shmem_free(dirty);
  unsigned char* zeroed = (unsigned char*)shmem_calloc(big / 8, 8);
  check(zeroed != NULL, "shmem_calloc(1 MiB) returned NULL");
  size_t nonzero = 0;
  for (size_t i = 0; i < big; ++i) nonzero += zeroed[i] != 0;
  check(nonzero == 0, "shmem_calloc left %zu of %zu bytes non-zero", nonzero, big);
  shmem_barrier_all(); /* every PE has looked before the puts below */
  /* ...on every PE before any PE returns: a peer's put right after calloc is not erased. */
  shmem_uchar_p(&zeroed[me], (unsigned char)(me + 1), right);
  shmem_barrier_all();
  check(zeroed[left] == (unsigned char)(left + 1), "calloc block byte %d is %d, expected %d", left,
        zeroed[left], left + 1);
  shmem_free(zeroed);

  /* shmem_align. */
  const size_t alignments[] = {8, 64, 256, 4096, (size_t)1 << 16, (size_t)1 << 20};
  for (size_t i = 0; i < sizeof(alignments) / sizeof(alignments[0]); ++i) {
    void* p = shmem_align(alignments[i], 100);
    check(p != NULL, "shmem_align(%zu, 100) returned NULL", alignments[i]);
    check((uintptr_t)p % alignments[i] == 0, "shmem_align(%zu) gave %p", alignments[i], p);
    check(shmem_addr_accessible(p, right) == 1, "aligned block is not accessible");
    shmem_free(p);
  }
  check(shmem_align(48, 8) == NULL, "shmem_align(48, 8) (not a power of two) is not NULL");
  /* Any power of two the heap (64 MiB here: TESSERA_HEAP_SIZE) can satisfy: 4, 8 and 16 MiB;
   * 32 MiB needs offset 32 MiB free (offset 0 holds shmem_init's words), and 64 MiB and above
   * cannot fit at all. */
  for (size_t a = (size_t)1 << 22; a <= ((size_t)1 << 25); a <<= 1) {
    void* p = shmem_align(a, 8);
    check(p != NULL && (uintptr_t)p % a == 0, "shmem_align(%zu MiB, 8) gave %p", a >> 20, p);
    shmem_free(p);
  }
  check(shmem_align((size_t)1 << 26, 8) == NULL, "shmem_align(64 MiB, 8) is not NULL");
  check(shmem_align((size_t)1 << 40, 8) == NULL, "shmem_align(1 TiB, 8) is not NULL");

  /* Size 0 and impossible sizes give NULL on every PE; the heap keeps working afterwards. */
  check(shmem_malloc(0) == NULL, "shmem_malloc(0) is not NULL");
  check(shmem_malloc((size_t)1 << 50) == NULL, "shmem_malloc(1 PiB) is not NULL");
  check(shmem_calloc(SIZE_MAX / 2, 4) == NULL, "an overflowing shmem_calloc is not NULL");
  shmem_free(NULL);

  /* realloc keeps the contents and the result is symmetric. */
  long* grow = (long*)shmem_malloc(4 * sizeof(long));
  for (int i = 0; i < 4; ++i) grow[i] = 100 * me + i;
  int* blocker = (int*)shmem_malloc(sizeof(int)); /* so the block cannot grow in place */
  grow = (long*)shmem_realloc(grow, 1024 * sizeof(long));
  check(grow != NULL, "shmem_realloc to 8 KiB returned NULL");
  for (int i = 0; i < 4; ++i)
    check(grow[i] == 100 * me + i, "realloc'd grow[%d] is %ld, expected %d", i, grow[i],
          100 * me + i);
  grow[1000] = 0;
  shmem_barrier_all();
  shmem_long_p(&grow[1000], me, right);
  shmem_barrier_all();
  check(grow[1000] == left, "realloc'd block got %ld, expected %d", grow[1000], left);
  check(shmem_realloc(grow, 0) == NULL, "shmem_realloc(p, 0) is not NULL");
  shmem_free(blocker);
  shmem_free(box);

  /* Many allocations and frees leave the heap reusable. */
  for (int round = 0; round < 50; ++round) {
    double* d = (double*)shmem_malloc((size_t)(round + 1) * 1000);
    check(d != NULL, "round %d: shmem_malloc returned NULL", round);
    shmem_free(d);
  }

  const int status = finish("memory");
  shmem_finalize();
  return status;
}
