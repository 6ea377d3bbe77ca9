/* Single elements: shmem_TYPE_p writes one element to each PE's slot for this PE, and
 * shmem_TYPE_g reads every PE's slot back, for every standard RMA type. */
#include "shmem_check.h"

#define DEFINE_PG_TEST(NAME, TYPE)                                                    \
  static void test_##NAME(void) {                                                     \
    const int me = shmem_my_pe(), n = shmem_n_pes();                                  \
    TYPE* slots = (TYPE*)shmem_calloc((size_t)n, sizeof(TYPE));                       \
    for (int pe = 0; pe < n; ++pe) shmem_##NAME##_p(&slots[me], (TYPE)(me + pe), pe); \
    shmem_barrier_all();                                                              \
    for (int from = 0; from < n; ++from)                                              \
      check(slots[from] == (TYPE)(from + me), #NAME "_p: slot %d wrong", from);       \
    for (int pe = 0; pe < n; ++pe)                                                    \
      for (int from = 0; from < n; ++from)                                            \
        check(shmem_##NAME##_g(&slots[from], pe) == (TYPE)(from + pe),                \
              #NAME "_g: slot %d of PE %d wrong", from, pe);                          \
    shmem_barrier_all();                                                              \
    shmem_free(slots);                                                                \
  }
TESSERA_SHMEM_RMA_TYPES(DEFINE_PG_TEST)
#undef DEFINE_PG_TEST

int main(void) {
  shmem_init();
#define RUN_PG_TEST(NAME, TYPE) test_##NAME();
  TESSERA_SHMEM_RMA_TYPES(RUN_PG_TEST)
#undef RUN_PG_TEST
  const int status = finish("p/g");
  shmem_finalize();
  return status;
}
