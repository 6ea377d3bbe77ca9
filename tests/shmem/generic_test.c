/* The C11 type-generic names select the routine of the pointed-to type: shmem_put on an int*
 * is shmem_int_put, shmem_atomic_fetch_add on a long* is shmem_long_atomic_fetch_add, and so on.
 * Each call below would move or combine the wrong bytes if the wrong typed routine ran. */
#include <stdint.h>

#include "shmem_check.h"

int main(void) {
  shmem_init();
  const int me = shmem_my_pe(), n = shmem_n_pes();
  const int right = (me + 1) % n, left = (me + n - 1) % n;
  double* d = (double*)shmem_calloc(8, sizeof(double));
  short* s = (short*)shmem_calloc(8, sizeof(short));
  long* l = (long*)shmem_calloc(4, sizeof(long));
  unsigned long long* u = (unsigned long long*)shmem_calloc(2, sizeof(unsigned long long));
  int32_t* bits = (int32_t*)shmem_calloc(1, sizeof(int32_t));
  uint64_t* sig = (uint64_t*)shmem_calloc(1, sizeof(uint64_t));
  const double dsrc[4] = {me + 0.5, me + 1.5, me + 2.5, me + 3.5};
  short ssrc[4] = {(short)(-me), (short)(me * 2), 3, 4};

  shmem_put(d, dsrc, 4, right);
  shmem_p(&s[0], (short)(me + 100), right);
  shmem_iput(&s[2], ssrc, 2, 1, 3, right);
  shmem_barrier_all();
  check(d[0] == left + 0.5 && d[3] == left + 3.5, "shmem_put(double*) moved %g, %g", d[0], d[3]);
  check(s[0] == left + 100, "shmem_p(short*) wrote %d", s[0]);
  check(s[2] == -left && s[4] == left * 2 && s[6] == 3, "shmem_iput(short*) wrote %d %d %d", s[2],
        s[4], s[6]);
  double dget[4] = {0, 0, 0, 0};
  shmem_get(dget, d, 4, left); /* left holds what left's left sent */
  check(dget[1] == (left + n - 1) % n + 1.5, "shmem_get(double*) read %g", dget[1]);
  check(shmem_g(&s[0], right) == me + 100, "shmem_g(short*) read %d", shmem_g(&s[0], right));

  for (int k = 0; k < 100; ++k) shmem_atomic_inc(&l[0], 0);
  const long before = shmem_atomic_fetch_add(&l[1], 5L, 0);
  check(before % 5 == 0, "shmem_atomic_fetch_add(long*) returned %ld", before);
  shmem_atomic_or(bits, (int32_t)1 << me, 0);
  shmem_atomic_set(&u[0], 0xFFFFFFFFFFull + (unsigned long long)me, right);
  shmem_barrier_all();
  if (me == 0) {
    check(l[0] == 100L * n, "shmem_atomic_inc total %ld, expected %d", l[0], 100 * n);
    check(l[1] == 5L * n, "shmem_atomic_fetch_add total %ld", l[1]);
    check(*bits == (int32_t)((1u << n) - 1), "shmem_atomic_or gave %x", (unsigned)*bits);
  }
  check(u[0] == 0xFFFFFFFFFFull + (unsigned long long)left, "shmem_atomic_set(ull*) wrote %llx",
        u[0]);
  check(shmem_atomic_fetch(&u[0], right) == 0xFFFFFFFFFFull + (unsigned long long)me,
        "shmem_atomic_fetch(ull*) wrong");
  check(shmem_atomic_compare_swap(&l[2], 0L, (long)(me + 1), 0) >= 0, "compare_swap");
  shmem_barrier_all();

  shmem_p(&l[3], 7L, right);
  shmem_wait_until(&l[3], SHMEM_CMP_EQ, 7L);
  check(shmem_test(&l[3], SHMEM_CMP_GE, 7L) == 1, "shmem_test(long*)");
  shmem_put_signal(d, dsrc, 1, sig, 1, SHMEM_SIGNAL_ADD, right);
  check(shmem_signal_wait_until(sig, SHMEM_CMP_EQ, 1) == 1, "signal after shmem_put_signal");
  shmem_barrier_all();

  shmem_free(sig);
  shmem_free(bits);
  shmem_free(u);
  shmem_free(l);
  shmem_free(s);
  shmem_free(d);
  const int status = finish("C11 generic names");
  shmem_finalize();
  return status;
}
