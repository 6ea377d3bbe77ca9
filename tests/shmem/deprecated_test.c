/* The deprecated API of OpenSHMEM 1.5 (Annex "Deprecated API"), as older programs and benchmark
 * suites call it: start_pes, _my_pe, _num_pes, shmalloc/shfree, the pre-1.4 AMO names (typed and
 * the C11 generics), and the active-set collectives with their pSync arrays and constants, on the
 * whole job and on the even PEs (logPE_stride 1). */
#include <stdint.h>
#include <string.h>

#include "shmem_check.h"

static long psync[SHMEM_REDUCE_SYNC_SIZE > SHMEM_BCAST_SYNC_SIZE ? SHMEM_REDUCE_SYNC_SIZE
                                                                 : SHMEM_BCAST_SYNC_SIZE];

/* The deprecated C11 generic AMO names, each on the types 1.3 gave it: every PE adds 5 to PE 0's
 * long long and 2 to its int, and PE 0 checks the sums, then set/swap/fetch on float and double
 * and cswap on long (a const pointer for fetch, as its typed form takes). */
static void test_old_generics(int me, int n) {
  long long* ll = (long long*)shmalloc(sizeof(long long));
  int* iv = (int*)shmalloc(sizeof(int));
  long* lv = (long*)shmalloc(sizeof(long));
  float* fv = (float*)shmalloc(sizeof(float));
  double* dv = (double*)shmalloc(sizeof(double));
  *ll = 0;
  *iv = 0;
  *lv = 0;
  *fv = 0.0f;
  *dv = 0.0;
  shmem_barrier_all();
  shmem_add(ll, 2LL, 0);
  shmem_inc(ll, 0);
  check(shmem_fadd(ll, 1LL, 0) >= 0, "generic fadd returned a negative old value");
  check(shmem_finc(ll, 0) >= 0, "generic finc returned a negative old value");
  shmem_inc(iv, 0);
  check(shmem_finc(iv, 0) >= 0, "generic int finc returned a negative old value");
  shmem_barrier_all();
  if (me == 0) {
    const long long* cll = ll;
    check(shmem_fetch(cll, 0) == 5LL * n, "generic add/inc/fadd/finc on long long gave %lld",
          shmem_fetch(cll, 0));
    check(shmem_fetch(iv, 0) == 2 * n, "generic inc/finc on int gave %d", shmem_fetch(iv, 0));
    shmem_set(fv, 1.5f, 0);
    check(shmem_swap(fv, 3.0f, 0) == 1.5f, "generic float swap did not return 1.5");
    check(shmem_fetch(fv, 0) == 3.0f, "generic float fetch did not see 3");
    shmem_set(dv, 0.25, 0);
    check(shmem_swap(dv, 8.0, 0) == 0.25, "generic double swap did not return 0.25");
    check(shmem_cswap(lv, 0L, 7L, 0) == 0L, "generic long cswap did not return 0");
    check(shmem_cswap(lv, 0L, 9L, 0) == 7L, "generic long cswap with a false cond swapped");
    check(shmem_fetch(lv, 0) == 7L && shmem_fetch(dv, 0) == 8.0, "generic long/double fetch");
  }
  shmem_barrier_all();
  shfree(dv);
  shfree(fv);
  shfree(lv);
  shfree(iv);
  shfree(ll);
}

int main(void) {
  start_pes(0);
  const int me = _my_pe();
  const int n = _num_pes();
  check(me == shmem_my_pe() && n == shmem_n_pes(), "_my_pe/_num_pes disagree with 1.5 names");
  for (size_t i = 0; i < sizeof(psync) / sizeof(psync[0]); ++i) psync[i] = _SHMEM_SYNC_VALUE;

  long* lv = (long*)shmalloc(sizeof(long));
  int* iv = (int*)shmalloc(sizeof(int));
  double* dv = (double*)shmalloc(sizeof(double));
  *lv = 0;
  *iv = 0;
  *dv = 0.0;
  shmem_barrier_all();

  /* Pre-1.4 AMOs on PE 0. */
  shmem_long_add(lv, 2, 0);
  shmem_long_inc(lv, 0);
  (void)shmem_long_fadd(lv, 1, 0);
  (void)shmem_long_finc(lv, 0);
  shmem_int_inc(iv, 0);
  shmem_barrier_all();
  if (me == 0) {
    check(*lv == 5L * n, "long add/inc/fadd/finc gave %ld, expected %ld", *lv, 5L * n);
    check(shmem_int_fetch(iv, 0) == n, "int inc/fetch gave %d", shmem_int_fetch(iv, 0));
  }
  shmem_barrier_all();
  if (me == 0) {
    shmem_double_set(dv, 2.5, 0);
    check(shmem_double_swap(dv, 4.0, 0) == 2.5, "double swap did not return 2.5");
    check(shmem_long_cswap(lv, 5L * n, 1, 0) == 5L * n, "long cswap did not return the old value");
    check(shmem_long_fetch(lv, 0) == 1, "long cswap did not store 1");
  }
  shmem_barrier_all();

  test_old_generics(me, n);

  /* The pre-1.4 waits: PE 0 waits for every other PE's store (shmem_wait) and each other PE
   * for PE 0's answer (shmem_int_wait). */
  int* answer = (int*)shmalloc(sizeof(int));
  long* knock = (long*)shmalloc((size_t)n * sizeof(long));
  *answer = 0;
  for (int p = 0; p < n; ++p) knock[p] = 0;
  shmem_barrier_all();
  if (me != 0) {
    shmem_long_p(&knock[me], 1, 0);
    shmem_int_wait(answer, 0);
    check(*answer == 42, "shmem_int_wait returned with %d", *answer);
  } else {
    for (int p = 1; p < n; ++p) shmem_wait(&knock[p], 0);
    for (int p = 1; p < n; ++p) shmem_int_p(answer, 42, p);
  }
  shmem_barrier_all();
  shfree(knock);
  shfree(answer);

  /* broadcast64 over every PE from set PE 1: every dest but the root's gets the source. */
  int64_t* src = (int64_t*)shmalloc(4 * sizeof(int64_t));
  int64_t* dst = (int64_t*)shmalloc(4 * (size_t)n * sizeof(int64_t));
  for (int i = 0; i < 4; ++i) src[i] = 10 * me + i;
  for (int i = 0; i < 4 * n; ++i) dst[i] = -1;
  shmem_barrier(0, 0, n, psync);
  shmem_broadcast64(dst, src, 4, 1, 0, 0, n, psync);
  for (int i = 0; i < 4; ++i) {
    const int64_t want = me == 1 ? -1 : 10 + i;
    check(dst[i] == want, "broadcast64 dest[%d] = %lld, expected %lld", i, (long long)dst[i],
          (long long)want);
  }
  /* fcollect64: 2 elements from every PE in order; collect32 with 1 + (me % 2) elements. */
  shmem_barrier_all();
  shmem_fcollect64(dst, src, 2, 0, 0, n, psync);
  for (int p = 0; p < n; ++p) {
    check(dst[2 * p] == 10 * p && dst[2 * p + 1] == 10 * p + 1, "fcollect64 block %d wrong", p);
  }
  int32_t* s32 = (int32_t*)shmalloc(2 * sizeof(int32_t));
  int32_t* d32 = (int32_t*)shmalloc(2 * (size_t)n * sizeof(int32_t));
  s32[0] = me;
  s32[1] = 100 + me;
  shmem_barrier_all();
  shmem_collect32(d32, s32, 1 + (size_t)(me % 2), 0, 0, n, psync);
  int at = 0;
  for (int p = 0; p < n; ++p) {
    check(d32[at] == p, "collect32 element %d is %d, expected %d", at, d32[at], p);
    ++at;
    if (p % 2 == 1) {
      check(d32[at] == 100 + p, "collect32 element %d is %d", at, d32[at]);
      ++at;
    }
  }
  /* alltoall32: one element per PE pair. */
  int32_t* a_src = (int32_t*)shmalloc((size_t)n * sizeof(int32_t));
  int32_t* a_dst = (int32_t*)shmalloc((size_t)n * sizeof(int32_t));
  for (int p = 0; p < n; ++p) a_src[p] = 1000 * me + p;
  shmem_barrier_all();
  shmem_alltoall32(a_dst, a_src, 1, 0, 0, n, psync);
  for (int p = 0; p < n; ++p) {
    check(a_dst[p] == 1000 * p + me, "alltoall32 from PE %d is %d", p, a_dst[p]);
  }

  /* Reductions to_all: sum over every PE, and over the even PEs (stride 2^1), plus and/max. */
  static int iwrk[SHMEM_REDUCE_MIN_WRKDATA_SIZE];
  static long lwrk[SHMEM_REDUCE_MIN_WRKDATA_SIZE];
  int* rsrc = (int*)shmalloc(2 * sizeof(int));
  int* rdst = (int*)shmalloc(2 * sizeof(int));
  long* lsrcp = (long*)shmalloc(sizeof(long));
  long* ldstp = (long*)shmalloc(sizeof(long));
  rsrc[0] = me + 1;
  rsrc[1] = 2 * me;
  *lsrcp = 0x0fL | (1L << (4 + me));
  shmem_barrier_all();
  shmem_int_sum_to_all(rdst, rsrc, 2, 0, 0, n, iwrk, psync);
  check(rdst[0] == n * (n + 1) / 2 && rdst[1] == n * (n - 1), "int_sum_to_all gave %d, %d", rdst[0],
        rdst[1]);
  shmem_long_and_to_all(ldstp, lsrcp, 1, 0, 0, n, lwrk, psync);
  check(*ldstp == 0x0fL, "long_and_to_all gave %#lx", *ldstp);
  shmem_int_max_to_all(rdst, rsrc, 2, 0, 0, n, iwrk, psync);
  check(rdst[0] == n && rdst[1] == 2 * (n - 1), "int_max_to_all gave %d, %d", rdst[0], rdst[1]);
  if (me % 2 == 0) {
    const int evens = (n + 1) / 2;
    shmem_int_sum_to_all(rdst, rsrc, 1, 0, 1, evens, iwrk, psync);
    int want = 0;
    for (int p = 0; p < n; p += 2) want += p + 1;
    check(rdst[0] == want, "int_sum_to_all over the even PEs gave %d, expected %d", rdst[0], want);
    shmem_barrier(0, 1, evens, psync);
  }
  shmem_barrier_all();

  const int status = finish("deprecated");
  shfree(ldstp);
  shfree(lsrcp);
  shfree(rdst);
  shfree(rsrc);
  shfree(a_dst);
  shfree(a_src);
  shfree(d32);
  shfree(s32);
  shfree(dst);
  shfree(src);
  shfree(dv);
  shfree(iv);
  shfree(lv);
  shmem_finalize();
  return status;
}
