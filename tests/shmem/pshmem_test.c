/* The profiling interface (OpenSHMEM 1.5 section 9.16 and pshmem.h): this program is its own
 * "tool": it defines shmem_putmem and shmem_long_atomic_fetch_add, counts the calls, and
 * forwards them to pshmem_putmem / pshmem_long_atomic_fetch_add. The program's calls must reach
 * these wrappers (one definition of each wins at link time, no clash with the library's) and
 * the data must still move. */
#include "pshmem.h"
#include "shmem_check.h"

static int putmem_calls;
static int fetch_add_calls;

void shmem_putmem(void* dest, const void* source, size_t nelems, int pe) {
  ++putmem_calls;
  pshmem_putmem(dest, source, nelems, pe);
}

long shmem_long_atomic_fetch_add(long* dest, long value, int pe) {
  ++fetch_add_calls;
  return pshmem_long_atomic_fetch_add(dest, value, pe);
}

int main(void) {
  shmem_init();
  const int me = shmem_my_pe();
  const int n = shmem_n_pes();
  int* inbox = (int*)shmem_calloc(2, sizeof(int));
  long* total = (long*)shmem_calloc(1, sizeof(long));
  const int mine[2] = {me, 10 * me};
  shmem_putmem(inbox, mine, sizeof(mine), (me + 1) % n);
  (void)shmem_long_atomic_fetch_add(total, me + 1, 0);
  shmem_barrier_all();
  const int left = (me + n - 1) % n;
  check(inbox[0] == left && inbox[1] == 10 * left, "inbox holds %d %d, expected %d %d", inbox[0],
        inbox[1], left, 10 * left);
  check(putmem_calls == 1, "the tool saw %d shmem_putmem calls, expected 1", putmem_calls);
  check(fetch_add_calls == 1, "the tool saw %d fetch_add calls, expected 1", fetch_add_calls);
  if (me == 0) check(*total == (long)n * (n + 1) / 2, "total is %ld", *total);
  /* A routine the tool does not wrap is the library's, under both names. */
  check(pshmem_my_pe() == shmem_my_pe(), "pshmem_my_pe differs from shmem_my_pe");
  const int status = finish("pshmem");
  shmem_free(total);
  shmem_free(inbox);
  shmem_finalize();
  return status;
}
