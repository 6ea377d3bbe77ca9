/* Point-to-point synchronization: wait_until and test with every comparison on every sync type,
 * then the set forms (all/any/some, status masks, _vector) on int. The left neighbour updates
 * this PE's variables; a wait that returns sees the data put before the update. */
#include <stdint.h>
#include <string.h>

#include "shmem_check.h"

/* For each type: the left neighbour sets *ivar to 5 (after data behind a fence); every
 * comparison then holds or not as arithmetic says, for wait_until and test alike. */
#define DEFINE_SYNC_TEST(NAME, TYPE)                                                       \
  static void test_##NAME(void) {                                                          \
    const int me = shmem_my_pe(), n = shmem_n_pes();                                       \
    const int right = (me + 1) % n, left = (me + n - 1) % n;                               \
    TYPE* ivar = (TYPE*)shmem_calloc(1, sizeof(TYPE));                                     \
    int* data = (int*)shmem_calloc(1, sizeof(int));                                        \
    check(shmem_##NAME##_test(ivar, SHMEM_CMP_EQ, (TYPE)5) == 0, #NAME "_test EQ 5 at 0"); \
    check(shmem_##NAME##_test(ivar, SHMEM_CMP_LT, (TYPE)5) == 1, #NAME "_test LT 5 at 0"); \
    shmem_barrier_all();                                                                   \
    shmem_int_p(data, 1000 + me, right);                                                   \
    shmem_fence();                                                                         \
    shmem_##NAME##_p(ivar, (TYPE)5, right);                                                \
    shmem_##NAME##_wait_until(ivar, SHMEM_CMP_EQ, (TYPE)5);                                \
    check(*data == 1000 + left, #NAME "_wait_until returned before the data: %d", *data);  \
    shmem_##NAME##_wait_until(ivar, SHMEM_CMP_NE, (TYPE)4);                                \
    shmem_##NAME##_wait_until(ivar, SHMEM_CMP_GT, (TYPE)4);                                \
    shmem_##NAME##_wait_until(ivar, SHMEM_CMP_GE, (TYPE)5);                                \
    shmem_##NAME##_wait_until(ivar, SHMEM_CMP_LT, (TYPE)6);                                \
    shmem_##NAME##_wait_until(ivar, SHMEM_CMP_LE, (TYPE)5);                                \
    check(shmem_##NAME##_test(ivar, SHMEM_CMP_EQ, (TYPE)5) == 1, #NAME "_test EQ");        \
    check(shmem_##NAME##_test(ivar, SHMEM_CMP_NE, (TYPE)5) == 0, #NAME "_test NE");        \
    check(shmem_##NAME##_test(ivar, SHMEM_CMP_GT, (TYPE)5) == 0, #NAME "_test GT");        \
    check(shmem_##NAME##_test(ivar, SHMEM_CMP_GE, (TYPE)6) == 0, #NAME "_test GE");        \
    check(shmem_##NAME##_test(ivar, SHMEM_CMP_LT, (TYPE)5) == 0, #NAME "_test LT");        \
    check(shmem_##NAME##_test(ivar, SHMEM_CMP_LE, (TYPE)4) == 0, #NAME "_test LE");        \
    shmem_barrier_all();                                                                   \
    shmem_free(data);                                                                      \
    shmem_free(ivar);                                                                      \
  }
TESSERA_SHMEM_SYNC_TYPES(DEFINE_SYNC_TEST)
#undef DEFINE_SYNC_TEST

/* Signed types compare as signed: -1 < 0. */
static void test_signed_order(void) {
  long* v = (long*)shmem_calloc(1, sizeof(long));
  *v = -1;
  check(shmem_long_test(v, SHMEM_CMP_LT, 0) == 1, "long -1 < 0 does not hold");
  shmem_long_wait_until(v, SHMEM_CMP_LT, 0);
  shmem_barrier_all();
  shmem_free(v);
}

/* With every one of the 4 ivars equal to 7, a series of _any calls must return each satisfied
 * index (OpenSHMEM 1.5): 4 calls see all 4, with or without a status mask, for test_any,
 * wait_until_any and their _vector forms; 3 calls with index 1 masked see the other 3. */
static void expect_fair_any(int* ivars) {
  int sevens[4] = {7, 7, 7, 7};
  int masked[4] = {0, 1, 0, 0};
  for (int form = 0; form < 4; ++form) {
    int seen[4] = {0, 0, 0, 0};
    for (int call = 0; call < 4; ++call) {
      size_t i = form == 0   ? shmem_int_test_any(ivars, 4, NULL, SHMEM_CMP_EQ, 7)
                 : form == 1 ? shmem_int_wait_until_any(ivars, 4, NULL, SHMEM_CMP_EQ, 7)
                 : form == 2
                     ? shmem_int_test_any_vector(ivars, 4, NULL, SHMEM_CMP_EQ, sevens)
                     : shmem_int_wait_until_any_vector(ivars, 4, NULL, SHMEM_CMP_EQ, sevens);
      check(i < 4, "any form %d returned %zu with all set", form, i);
      if (i < 4) seen[i] = 1;
    }
    check(seen[0] && seen[1] && seen[2] && seen[3],
          "4 calls of any form %d with all set returned only indices {%s%s%s%s}", form,
          seen[0] ? " 0" : "", seen[1] ? " 1" : "", seen[2] ? " 2" : "", seen[3] ? " 3" : "");
    int seen_masked[4] = {0, 0, 0, 0};
    for (int call = 0; call < 3; ++call) {
      size_t i = form % 2 == 0 ? shmem_int_test_any(ivars, 4, masked, SHMEM_CMP_EQ, 7)
                               : shmem_int_wait_until_any(ivars, 4, masked, SHMEM_CMP_EQ, 7);
      check(i < 4 && i != 1, "any form %d returned %zu with index 1 masked", form, i);
      if (i < 4) seen_masked[i] = 1;
    }
    check(seen_masked[0] && seen_masked[2] && seen_masked[3],
          "3 calls of any form %d with index 1 masked missed one of 0, 2, 3", form);
  }
}

/* The set forms on 4 ints. The left neighbour sets ivars[2] = 7, later all of them. */
static void test_sets(void) {
  const int me = shmem_my_pe(), n = shmem_n_pes();
  const int right = (me + 1) % n;
  int* ivars = (int*)shmem_calloc(4, sizeof(int));
  size_t indices[4];
  int status[4] = {0, 0, 0, 0};
  int values[4] = {1, 2, 3, 4};

  check(shmem_int_test_any(ivars, 4, NULL, SHMEM_CMP_EQ, 7) == SIZE_MAX, "test_any at start");
  check(shmem_int_test_some(ivars, 4, indices, NULL, SHMEM_CMP_EQ, 7) == 0, "test_some at start");
  check(shmem_int_test_all(ivars, 4, NULL, SHMEM_CMP_EQ, 0) == 1, "test_all EQ 0 at start");
  shmem_barrier_all();

  shmem_int_p(&ivars[2], 7, right);
  size_t found = shmem_int_wait_until_any(ivars, 4, NULL, SHMEM_CMP_EQ, 7);
  check(found == 2, "wait_until_any returned %zu, expected 2", found);
  size_t count = shmem_int_wait_until_some(ivars, 4, indices, NULL, SHMEM_CMP_EQ, 7);
  check(count == 1 && indices[0] == 2, "wait_until_some: %zu indices, first %zu", count,
        indices[0]);
  status[2] = 1; /* index 2 leaves the set */
  check(shmem_int_test_any(ivars, 4, status, SHMEM_CMP_EQ, 7) == SIZE_MAX,
        "test_any counted a masked variable");
  check(shmem_int_test_all(ivars, 4, NULL, SHMEM_CMP_EQ, 7) == 0, "test_all before all are set");
  for (int i = 0; i < 4; ++i) status[i] = 1;
  check(shmem_int_wait_until_any(ivars, 4, status, SHMEM_CMP_EQ, 7) == SIZE_MAX,
        "wait_until_any on an empty set is not SIZE_MAX");
  check(shmem_int_wait_until_some(ivars, 4, indices, status, SHMEM_CMP_EQ, 7) == 0,
        "wait_until_some on an empty set is not 0");
  shmem_barrier_all();

  for (int i = 0; i < 4; ++i) shmem_int_p(&ivars[i], 7, right);
  shmem_int_wait_until_all(ivars, 4, NULL, SHMEM_CMP_EQ, 7);
  check(shmem_int_test_all(ivars, 4, NULL, SHMEM_CMP_GE, 7) == 1, "test_all after all set");
  count = shmem_int_test_some(ivars, 4, indices, NULL, SHMEM_CMP_EQ, 7);
  check(count == 4 && indices[3] == 3, "test_some after all set: %zu", count);
  expect_fair_any(ivars);
  shmem_barrier_all();

  /* _vector: ivars[i] compared with values[i]. */
  for (int i = 0; i < 4; ++i) shmem_int_p(&ivars[i], values[i], right);
  shmem_int_wait_until_all_vector(ivars, 4, NULL, SHMEM_CMP_EQ, values);
  check(shmem_int_test_all_vector(ivars, 4, NULL, SHMEM_CMP_EQ, values) == 1, "test_all_vector");
  int others[4] = {9, 9, 3, 9};
  check(shmem_int_test_any_vector(ivars, 4, NULL, SHMEM_CMP_EQ, others) == 2, "test_any_vector");
  check(shmem_int_wait_until_any_vector(ivars, 4, NULL, SHMEM_CMP_EQ, others) == 2,
        "wait_until_any_vector");
  count = shmem_int_wait_until_some_vector(ivars, 4, indices, NULL, SHMEM_CMP_NE, others);
  check(count == 3 && indices[0] == 0 && indices[2] == 3, "wait_until_some_vector: %zu", count);
  count = shmem_int_test_some_vector(ivars, 4, indices, NULL, SHMEM_CMP_LT, others);
  check(count == 3, "test_some_vector LT: %zu", count);
  shmem_barrier_all();
  shmem_free(ivars);
}

int main(void) {
  shmem_init();
#define RUN_SYNC_TEST(NAME, TYPE) test_##NAME();
  TESSERA_SHMEM_SYNC_TYPES(RUN_SYNC_TEST)
#undef RUN_SYNC_TEST
  test_signed_order();
  test_sets();
  const int status = finish("wait/test");
  shmem_finalize();
  return status;
}
