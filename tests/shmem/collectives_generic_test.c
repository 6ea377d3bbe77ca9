/* The C11 generic names of the collectives, each used with every type it selects on: shmem_sync
 * (both forms), shmem_broadcast, shmem_collect, shmem_fcollect, shmem_alltoall, shmem_alltoalls,
 * shmem_{and,or,xor,max,min,sum,prod}_reduce. A missing name or type association fails the
 * build; a selection of the wrong typed routine moves or combines the wrong bytes, which the
 * checks see. */
#include <complex.h>

#include "collectives_check.h"

/* The types each generic family selects on: X(label, TYPE). */
#define RMA_BASE_TYPES(X)    \
  X(float, float)            \
  X(double, double)          \
  X(longdouble, long double) \
  X(char, char)              \
  X(schar, signed char)      \
  X(short, short)            \
  X(int, int)                \
  X(long, long)              \
  X(longlong, long long)     \
  X(uchar, unsigned char)    \
  X(ushort, unsigned short)  \
  X(uint, unsigned int)      \
  X(ulong, unsigned long)    \
  X(ulonglong, unsigned long long)
#define BITWISE_BASE_TYPES(X)      \
  X(uchar, unsigned char)          \
  X(ushort, unsigned short)        \
  X(uint, unsigned int)            \
  X(ulong, unsigned long)          \
  X(ulonglong, unsigned long long) \
  X(int8, int8_t) X(int16, int16_t) X(int32, int32_t) X(int64, int64_t)
#define COMPLEX_BASE_TYPES(X) X(complexd, double _Complex) X(complexf, float _Complex)

#define N 5

/* Data movement: every PE's block i holds me * 10 + i. */
#define MOVE(LABEL, TYPE)                                                                    \
  static void move_##LABEL(void) {                                                           \
    const int me = shmem_my_pe(), n = shmem_n_pes();                                         \
    TYPE* src = (TYPE*)shmem_malloc((size_t)n * N * 2 * sizeof(TYPE));                       \
    TYPE* dst = (TYPE*)shmem_malloc((size_t)n * N * 2 * sizeof(TYPE));                       \
    for (size_t i = 0; i < (size_t)n * N * 2; ++i) src[i] = (TYPE)(me * 10 + (int)(i % 10)); \
    for (size_t i = 0; i < (size_t)n * N * 2; ++i) dst[i] = (TYPE)99;                        \
    check(shmem_broadcast(SHMEM_TEAM_WORLD, dst, src, N, n - 1) == 0, "broadcast");          \
    check(dst[N - 1] == (TYPE)((n - 1) * 10 + N - 1), "shmem_broadcast(" #TYPE "*)");        \
    for (size_t i = 0; i < (size_t)n * N * 2; ++i) dst[i] = (TYPE)99;                        \
    check(shmem_collect(SHMEM_TEAM_WORLD, dst, src, 1) == 0, "collect");                     \
    check(dst[n - 1] == (TYPE)((n - 1) * 10), "shmem_collect(" #TYPE "*)");                  \
    for (size_t i = 0; i < (size_t)n * N * 2; ++i) dst[i] = (TYPE)99;                        \
    check(shmem_fcollect(SHMEM_TEAM_WORLD, dst, src, 2) == 0, "fcollect");                   \
    check(dst[2 * n - 1] == (TYPE)((n - 1) * 10 + 1), "shmem_fcollect(" #TYPE "*)");         \
    for (size_t i = 0; i < (size_t)n * N * 2; ++i) dst[i] = (TYPE)99;                        \
    check(shmem_alltoall(SHMEM_TEAM_WORLD, dst, src, 1) == 0, "alltoall");                   \
    check(dst[n - 1] == (TYPE)((n - 1) * 10 + me), "shmem_alltoall(" #TYPE "*)");            \
    for (size_t i = 0; i < (size_t)n * N * 2; ++i) dst[i] = (TYPE)99;                        \
    check(shmem_alltoalls(SHMEM_TEAM_WORLD, dst, src, 2, 1, 1) == 0, "alltoalls");           \
    check(dst[2 * (n - 1)] == (TYPE)((n - 1) * 10 + me), "shmem_alltoalls(" #TYPE "*)");     \
    shmem_free(dst);                                                                         \
    shmem_free(src);                                                                         \
  }
RMA_BASE_TYPES(MOVE)

/* In-place reductions of two elements = me + 1 over the world, against the value computed here. */
#define REDUCE(LABEL, TYPE, OP, WANT)                                              \
  static void OP##_##LABEL(void) {                                                 \
    const int me = shmem_my_pe(), n = shmem_n_pes();                               \
    TYPE* buf = (TYPE*)shmem_malloc(2 * sizeof(TYPE));                             \
    TYPE want = (TYPE)1;                                                           \
    buf[0] = (TYPE)(me + 1);                                                       \
    buf[1] = (TYPE)(me + 1);                                                       \
    for (int pe = 0; pe < n; ++pe) want = (TYPE)(WANT);                            \
    check(shmem_##OP##_reduce(SHMEM_TEAM_WORLD, buf, buf, 2) == 0, #OP "_reduce"); \
    check(buf[0] == want && buf[1] == want,                                        \
          "shmem_" #OP "_reduce(" #TYPE "*) gave a wrong result");                 \
    shmem_free(buf);                                                               \
  }
#define BITWISE(LABEL, TYPE)                                                         \
  REDUCE(LABEL, TYPE, and, pe == 0 ? (TYPE)(pe + 1) : (TYPE)(want & (TYPE)(pe + 1))) \
  REDUCE(LABEL, TYPE, or, pe == 0 ? (TYPE)(pe + 1) : (TYPE)(want | (TYPE)(pe + 1)))  \
  REDUCE(LABEL, TYPE, xor, pe == 0 ? (TYPE)(pe + 1) : (TYPE)(want ^ (TYPE)(pe + 1)))
#define ORDERED(LABEL, TYPE)                                                  \
  REDUCE(LABEL, TYPE, max, pe + 1)                                            \
  REDUCE(LABEL, TYPE, min, pe == 0 ? 1 : want)                                \
  REDUCE(LABEL, TYPE, sum, pe == 0 ? (TYPE)1 : (TYPE)(want + (TYPE)(pe + 1))) \
  REDUCE(LABEL, TYPE, prod, (TYPE)(want * (TYPE)(pe + 1)))
#define ARITHMETIC(LABEL, TYPE)                                               \
  REDUCE(LABEL, TYPE, sum, pe == 0 ? (TYPE)1 : (TYPE)(want + (TYPE)(pe + 1))) \
  REDUCE(LABEL, TYPE, prod, (TYPE)(want * (TYPE)(pe + 1)))
BITWISE_BASE_TYPES(BITWISE)
RMA_BASE_TYPES(ORDERED)
COMPLEX_BASE_TYPES(ARITHMETIC)

int main(void) {
  shmem_init();
  long psync[SHMEM_SYNC_SIZE] = {SHMEM_SYNC_VALUE};
  check(shmem_sync(SHMEM_TEAM_WORLD) == 0, "shmem_sync(team)");
  shmem_sync(0, 0, shmem_n_pes(), psync);
#define RUN_MOVE(LABEL, TYPE) move_##LABEL();
#define RUN_BITWISE(LABEL, TYPE) \
  and_##LABEL();                 \
  or_##LABEL();                  \
  xor_##LABEL();
#define RUN_ORDERED(LABEL, TYPE) \
  max_##LABEL();                 \
  min_##LABEL();                 \
  sum_##LABEL();                 \
  prod_##LABEL();
#define RUN_ARITHMETIC(LABEL, TYPE) \
  sum_##LABEL();                    \
  prod_##LABEL();
  RMA_BASE_TYPES(RUN_MOVE)
  BITWISE_BASE_TYPES(RUN_BITWISE)
  RMA_BASE_TYPES(RUN_ORDERED)
  COMPLEX_BASE_TYPES(RUN_ARITHMETIC)
  const int status = finish("C11 generic collectives");
  shmem_finalize();
  return status;
}
