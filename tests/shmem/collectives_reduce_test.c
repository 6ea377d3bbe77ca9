/* The team-based reductions shmem_TYPENAME_{and,or,xor,max,min,sum,prod}_reduce for every type
 * the specification lists per operation, each checked against the reduction computed here in
 * the same type and team order: on the world and on a strided team, for 1, 7, 3001 and
 * 5003 elements (the last in two phases on teams of three or more), out of place and in place (dest
 * == source). Values keep every result exact and in range (products of 1 .. 3, sums below 100 per
 * PE), so any order gives the same bits. An invalid team gives nonzero and leaves dest alone. */
#include <complex.h>

#include "collectives_check.h"

/* The element value PE `pe` contributes to reduction `op`, and the operation itself. */
#define VALUE_and(pe, i) (test_value(pe, i, 1) | 0x40)
#define VALUE_or(pe, i) (1 << (((size_t)(pe) + (i)) % 7))
#define VALUE_xor(pe, i) test_value(pe, i, 2)
#define VALUE_max(pe, i) (test_value(pe, i, 3) - 48)
#define VALUE_min(pe, i) (test_value(pe, i, 4) - 48)
#define VALUE_sum(pe, i) (test_value(pe, i, 5) / 4)
#define VALUE_prod(pe, i) (1 + test_value(pe, i, 6) % 3)
#define COMBINE_and(a, b) ((a) & (b))
#define COMBINE_or(a, b) ((a) | (b))
#define COMBINE_xor(a, b) ((a) ^ (b))
#define COMBINE_max(a, b) ((b) > (a) ? (b) : (a))
#define COMBINE_min(a, b) ((b) < (a) ? (b) : (a))
#define COMBINE_sum(a, b) ((a) + (b))
#define COMBINE_prod(a, b) ((a) * (b))

/* The element of a complex-typed reduction: a real and an imaginary part. */
#define COMPLEX_VALUE(TYPE, OP, pe, i) \
  ((TYPE)VALUE_##OP(pe, i) + (TYPE)(((size_t)(pe) + (i)) % 2) * (TYPE)I)
#define REAL_VALUE(TYPE, OP, pe, i) ((TYPE)VALUE_##OP(pe, i))

/* The common counts, and one past the size from which teams of three or more reduce in two
 * phases (src/shmem/collectives_reduce.cpp: 4096 elements). */
static const size_t reduce_counts[] = {1, 7, 3001, 5003};
#define REDUCE_N_COUNTS 4
#define REDUCE_MAX_COUNT 5003

static int reductions_run = 0;

#define TEST_REDUCE(NAME, TYPE, OP, VALUE)                                                    \
  static void reduce_##NAME##_##OP(void) {                                                    \
    TYPE* src = (TYPE*)shmem_malloc(REDUCE_MAX_COUNT * sizeof(TYPE));                         \
    TYPE* dst = (TYPE*)shmem_malloc(REDUCE_MAX_COUNT * sizeof(TYPE));                         \
    TYPE want[REDUCE_MAX_COUNT];                                                              \
    const int me = shmem_my_pe();                                                             \
    for (int c = 0; c < 2; ++c) {                                                             \
      shmem_team_t team = collective_teams[c];                                                \
      begin_collective_case();                                                                \
      const int size = shmem_team_n_pes(team);                                                \
      for (int k = 0; k < REDUCE_N_COUNTS; ++k) {                                             \
        next_collective();                                                                    \
        const size_t n = reduce_counts[k];                                                    \
        for (size_t i = 0; i < n; ++i) {                                                      \
          want[i] = VALUE(TYPE, OP, world_of(team, 0), i);                                    \
          for (int r = 1; r < size; ++r) {                                                    \
            want[i] = (TYPE)COMBINE_##OP(want[i], VALUE(TYPE, OP, world_of(team, r), i));     \
          }                                                                                   \
        }                                                                                     \
        for (int in_place = 0; in_place < 2; ++in_place) {                                    \
          TYPE* out = in_place ? src : dst;                                                   \
          for (size_t i = 0; i < n; ++i) {                                                    \
            src[i] = VALUE(TYPE, OP, me, i);                                                  \
            dst[i] = (TYPE)77;                                                                \
          }                                                                                   \
          const int rc = shmem_##NAME##_##OP##_reduce(team, out, src, n);                     \
          check(rc == 0, "shmem_" #NAME "_" #OP "_reduce returned %d", rc);                   \
          int bad = 0;                                                                        \
          for (size_t i = 0; i < n; ++i) {                                                    \
            if (out[i] != want[i] && bad++ == 0) {                                            \
              check(0, "shmem_" #NAME "_" #OP "_reduce on %s, n %zu%s: element %zu wrong",    \
                    collective_team_names[c], n, in_place ? ", in place" : "", i);            \
            }                                                                                 \
          }                                                                                   \
        }                                                                                     \
      }                                                                                       \
    }                                                                                         \
    dst[0] = (TYPE)77;                                                                        \
    check(shmem_##NAME##_##OP##_reduce(SHMEM_TEAM_INVALID, dst, src, 1) != 0 && dst[0] == 77, \
          "shmem_" #NAME "_" #OP "_reduce on SHMEM_TEAM_INVALID returned 0 or wrote dest");   \
    ++reductions_run;                                                                         \
    shmem_free(dst);                                                                          \
    shmem_free(src);                                                                          \
  }

#define TEST_BITWISE(NAME, TYPE)           \
  TEST_REDUCE(NAME, TYPE, and, REAL_VALUE) \
  TEST_REDUCE(NAME, TYPE, or, REAL_VALUE)  \
  TEST_REDUCE(NAME, TYPE, xor, REAL_VALUE)
#define TEST_ORDERED(NAME, TYPE)           \
  TEST_REDUCE(NAME, TYPE, max, REAL_VALUE) \
  TEST_REDUCE(NAME, TYPE, min, REAL_VALUE) \
  TEST_REDUCE(NAME, TYPE, sum, REAL_VALUE) \
  TEST_REDUCE(NAME, TYPE, prod, REAL_VALUE)
#define TEST_COMPLEX(NAME, TYPE)              \
  TEST_REDUCE(NAME, TYPE, sum, COMPLEX_VALUE) \
  TEST_REDUCE(NAME, TYPE, prod, COMPLEX_VALUE)
TESSERA_SHMEM_BITWISE_REDUCE_TYPES(TEST_BITWISE)
TESSERA_SHMEM_ORDERED_REDUCE_TYPES(TEST_ORDERED)
TESSERA_SHMEM_COMPLEX_REDUCE_TYPES(TEST_COMPLEX)

int main(int argc, char** argv) {
  shmem_init();
  parse_collective_args(argc, argv);
  make_collective_teams();
#define RUN_BITWISE(NAME, TYPE) \
  reduce_##NAME##_and();        \
  reduce_##NAME##_or();         \
  reduce_##NAME##_xor();
#define RUN_ORDERED(NAME, TYPE) \
  reduce_##NAME##_max();        \
  reduce_##NAME##_min();        \
  reduce_##NAME##_sum();        \
  reduce_##NAME##_prod();
#define RUN_COMPLEX(NAME, TYPE) \
  reduce_##NAME##_sum();        \
  reduce_##NAME##_prod();
  TESSERA_SHMEM_BITWISE_REDUCE_TYPES(RUN_BITWISE)
  TESSERA_SHMEM_ORDERED_REDUCE_TYPES(RUN_ORDERED)
  TESSERA_SHMEM_COMPLEX_REDUCE_TYPES(RUN_COMPLEX)
  /* 14 bitwise types x 3 + 24 ordered types x 4 + 2 complex types x 2. */
  check(reductions_run == 14 * 3 + 24 * 4 + 2 * 2, "%d reduction routines ran", reductions_run);
  destroy_collective_teams();
  const int status = finish("reductions");
  shmem_finalize();
  return status;
}
