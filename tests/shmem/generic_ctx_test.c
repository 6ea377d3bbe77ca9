/* The C11 generic names with a context first (OpenSHMEM 1.5 section 9): shmem_put(ctx, dest,
 * source, nelems, pe) is shmem_ctx_TYPENAME_put for the type dest points to, and likewise every
 * RMA, AMO (the _nbi ones too) and put-with-signal name; the same names without a context still
 * call the non-ctx routines. Values span every byte of their type, so the routine of a wrong
 * type moves or combines the wrong bytes; a context made from a team that starts at world PE 1
 * shows that the context routine ran (its PE 0 is world PE 1, the default context's is PE 0). */
#include <stdint.h>

#include "shmem_check.h"

int main(void) {
  shmem_init();
  const int me = shmem_my_pe(), n = shmem_n_pes();
  const int right = (me + 1) % n, left = (me + n - 1) % n;
  double* d = (double*)shmem_calloc(8, sizeof(double));
  short* s = (short*)shmem_calloc(8, sizeof(short));
  long* l = (long*)shmem_calloc(8, sizeof(long));
  unsigned long long* u = (unsigned long long*)shmem_calloc(4, sizeof(unsigned long long));
  int32_t* bits = (int32_t*)shmem_calloc(2, sizeof(int32_t));
  uint64_t* sig = (uint64_t*)shmem_calloc(2, sizeof(uint64_t));
  long* team_counter = (long*)shmem_calloc(2, sizeof(long));
  const double dsrc[4] = {me + 0.25, me + 1.25, me + 2.25, me + 3.25};
  const short ssrc[4] = {(short)(-me - 1), (short)(me * 300 + 7), 3, 4};

  shmem_ctx_t ctx = SHMEM_CTX_INVALID;
  check(shmem_ctx_create(SHMEM_CTX_PRIVATE, &ctx) == 0, "shmem_ctx_create failed");

  /* RMA through the context. */
  shmem_put(ctx, d, dsrc, 2, right);
  shmem_put_nbi(ctx, &d[2], &dsrc[2], 2, right);
  shmem_p(ctx, &s[0], (short)(me * 1000 + 1), right);
  shmem_iput(ctx, &s[2], ssrc, 2, 1, 3, right);
  shmem_ctx_quiet(ctx);
  shmem_barrier_all();
  check(d[0] == left + 0.25 && d[1] == left + 1.25, "shmem_put(ctx, double*) moved %g, %g", d[0],
        d[1]);
  check(d[2] == left + 2.25 && d[3] == left + 3.25, "shmem_put_nbi(ctx, double*) moved %g, %g",
        d[2], d[3]);
  check(s[0] == left * 1000 + 1, "shmem_p(ctx, short*) wrote %d", s[0]);
  check(s[2] == -left - 1 && s[4] == left * 300 + 7 && s[6] == 3,
        "shmem_iput(ctx, short*) wrote %d %d %d", s[2], s[4], s[6]);
  double dget[4] = {0, 0, 0, 0};
  shmem_get(ctx, dget, d, 2, right); /* right holds what this PE sent */
  shmem_get_nbi(ctx, &dget[2], &d[2], 2, right);
  shmem_ctx_quiet(ctx);
  check(dget[0] == me + 0.25 && dget[3] == me + 3.25, "shmem_get(_nbi)(ctx, double*) read %g, %g",
        dget[0], dget[3]);
  short sget[3] = {0, 0, 0};
  shmem_iget(ctx, sget, &s[2], 1, 2, 3, right);
  check(sget[0] == -me - 1 && sget[1] == me * 300 + 7 && sget[2] == 3,
        "shmem_iget(ctx, short*) read %d %d %d", sget[0], sget[1], sget[2]);
  check(shmem_g(ctx, &s[0], right) == me * 1000 + 1, "shmem_g(ctx, short*) read %d",
        shmem_g(ctx, &s[0], right));
  shmem_barrier_all();

  /* AMOs through the context: counters on PE 0. */
  for (int k = 0; k < 10; ++k) shmem_atomic_inc(ctx, &l[0], 0);
  shmem_atomic_add(ctx, &l[0], 0x100000000L, 0);
  check(shmem_atomic_fetch_add(ctx, &l[1], 5L, 0) % 5 == 0, "shmem_atomic_fetch_add(ctx, long*)");
  check(shmem_atomic_fetch_inc(ctx, &l[2], 0) >= 0, "shmem_atomic_fetch_inc(ctx, long*)");
  shmem_atomic_or(ctx, &bits[0], (int32_t)1 << (8 * (me % 4)), 0);
  shmem_atomic_set(ctx, &u[0], 0xABCDEF0123ull + (unsigned long long)me, right);
  shmem_atomic_set(ctx, &d[4], me + 0.5, right);
  long fetched[5] = {-1, -1, -1, -1, -1};
  shmem_atomic_fetch_add_nbi(ctx, &fetched[0], &l[3], 3L, 0);
  shmem_atomic_fetch_inc_nbi(ctx, &fetched[1], &l[4], 0);
  shmem_atomic_compare_swap_nbi(ctx, &fetched[2], &l[5], 0L, (long)(me + 1), 0);
  shmem_ctx_quiet(ctx);
  check(fetched[0] >= 0 && fetched[0] % 3 == 0, "shmem_atomic_fetch_add_nbi(ctx) fetched %ld",
        fetched[0]);
  check(fetched[1] >= 0 && fetched[1] < n, "shmem_atomic_fetch_inc_nbi(ctx) fetched %ld",
        fetched[1]);
  check(fetched[2] >= 0 && fetched[2] <= n, "shmem_atomic_compare_swap_nbi(ctx) fetched %ld",
        fetched[2]);
  shmem_barrier_all();
  if (me == 0) {
    check(l[0] == 10L * n + 0x100000000L * n, "shmem_atomic_inc/add(ctx) total %lx", l[0]);
    check(l[1] == 5L * n && l[2] == n, "shmem_atomic_fetch_add/inc(ctx) totals %ld %ld", l[1],
          l[2]);
    check(l[3] == 3L * n && l[4] == n, "the _nbi fetch_add/inc(ctx) totals %ld %ld", l[3], l[4]);
    int32_t expect = 0;
    for (int p = 0; p < n; ++p) expect |= (int32_t)1 << (8 * (p % 4));
    check(bits[0] == expect, "shmem_atomic_or(ctx, int32_t*) gave %x", (unsigned)bits[0]);
  }
  check(u[0] == 0xABCDEF0123ull + (unsigned long long)left,
        "shmem_atomic_set(ctx, ull*) wrote %llx", u[0]);
  check(d[4] == left + 0.5, "shmem_atomic_set(ctx, double*) wrote %g", d[4]);
  shmem_barrier_all(); /* read before the left neighbour swaps it below */
  check(shmem_atomic_fetch(ctx, &u[0], right) == 0xABCDEF0123ull + (unsigned long long)me,
        "shmem_atomic_fetch(ctx, ull*)");
  check(shmem_atomic_swap(ctx, &d[4], 9.5, right) == me + 0.5, "shmem_atomic_swap(ctx, double*)");
  double dfetch = 0;
  shmem_atomic_fetch_nbi(ctx, &dfetch, &d[4], right);
  shmem_ctx_quiet(ctx);
  check(dfetch == 9.5, "shmem_atomic_fetch_nbi(ctx, double*) fetched %g", dfetch);
  shmem_atomic_swap_nbi(ctx, &dfetch, &d[4], 1.5, right);
  shmem_ctx_quiet(ctx);
  check(dfetch == 9.5, "shmem_atomic_swap_nbi(ctx, double*) fetched %g", dfetch);
  check(shmem_atomic_compare_swap(ctx, &u[1], 0ull, 0x1122334455667788ull, right) == 0,
        "shmem_atomic_compare_swap(ctx, ull*)");
  shmem_barrier_all();

  /* The bitwise AMOs on this PE's right neighbour's word bits[1] (only this PE changes it). */
  shmem_atomic_set(ctx, &bits[1], (int32_t)0x0F0F0F0F, right);
  shmem_atomic_and(ctx, &bits[1], (int32_t)0x00FFFF00, right);
  check(shmem_atomic_fetch_or(ctx, &bits[1], (int32_t)0x70000001, right) == 0x000F0F00,
        "shmem_atomic_and/fetch_or(ctx, int32_t*)");
  shmem_atomic_xor(ctx, &bits[1], (int32_t)0x1, right);
  check(shmem_atomic_fetch_and(ctx, &bits[1], (int32_t)0x7FFFFFFF, right) == 0x700F0F00,
        "shmem_atomic_xor/fetch_and(ctx, int32_t*)");
  check(shmem_atomic_fetch_xor(ctx, &bits[1], (int32_t)0x700F0F00, right) == 0x700F0F00,
        "shmem_atomic_fetch_xor(ctx, int32_t*)");
  int32_t bfetch[3] = {-1, -1, -1};
  shmem_atomic_fetch_or_nbi(ctx, &bfetch[0], &bits[1], (int32_t)0x300, right);
  shmem_ctx_quiet(ctx);
  shmem_atomic_fetch_xor_nbi(ctx, &bfetch[1], &bits[1], (int32_t)0x100, right);
  shmem_ctx_quiet(ctx);
  shmem_atomic_fetch_and_nbi(ctx, &bfetch[2], &bits[1], (int32_t)0, right);
  shmem_ctx_quiet(ctx);
  check(bfetch[0] == 0 && bfetch[1] == 0x300 && bfetch[2] == 0x200,
        "the bitwise _nbi AMOs(ctx) fetched %x %x %x", (unsigned)bfetch[0], (unsigned)bfetch[1],
        (unsigned)bfetch[2]);
  /* The same _nbi names without a context (new generic names too). */
  long plain_fetch = -1;
  shmem_atomic_fetch_add_nbi(&plain_fetch, &l[6], 2L, right);
  shmem_quiet();
  check(plain_fetch == 0, "shmem_atomic_fetch_add_nbi(long*) fetched %ld", plain_fetch);
  shmem_barrier_all();
  check(l[6] == 2, "shmem_atomic_fetch_add_nbi(long*) left %ld", l[6]);

  /* Put-with-signal through the context. */
  shmem_put_signal(ctx, &d[5], &dsrc[1], 1, &sig[0], 1, SHMEM_SIGNAL_ADD, right);
  shmem_put_signal_nbi(ctx, &s[7], &ssrc[1], 1, &sig[1], 0x55, SHMEM_SIGNAL_SET, right);
  shmem_ctx_quiet(ctx);
  check(shmem_signal_wait_until(&sig[0], SHMEM_CMP_EQ, 1) == 1, "signal of shmem_put_signal(ctx)");
  check(shmem_signal_wait_until(&sig[1], SHMEM_CMP_EQ, 0x55) == 0x55,
        "signal of shmem_put_signal_nbi(ctx)");
  check(d[5] == left + 1.25 && s[7] == left * 300 + 7, "shmem_put_signal(_nbi)(ctx) moved %g, %d",
        d[5], s[7]);
  shmem_barrier_all();

  /* A team context: PE 0 of the team of world PEs 1 .. n-1 is world PE 1, so the ctx generic
   * adds to world PE 1's counter and the plain one (default context) to world PE 0's. */
  shmem_team_t upper = SHMEM_TEAM_INVALID;
  shmem_team_split_strided(SHMEM_TEAM_WORLD, 1, 1, n - 1, NULL, 0, &upper);
  if (upper != SHMEM_TEAM_INVALID) {
    shmem_ctx_t team_ctx = SHMEM_CTX_INVALID;
    check(shmem_team_create_ctx(upper, 0, &team_ctx) == 0, "shmem_team_create_ctx failed");
    shmem_atomic_add(team_ctx, &team_counter[0], 1L, 0);
    shmem_atomic_add(&team_counter[1], 1L, 0);
    shmem_ctx_destroy(team_ctx);
  }
  shmem_barrier_all();
  check(team_counter[0] == (me == 1 ? n - 1 : 0),
        "shmem_atomic_add(team ctx, long*, ..., 0) left %ld here", team_counter[0]);
  check(team_counter[1] == (me == 0 ? n - 1 : 0), "shmem_atomic_add(long*, ..., 0) left %ld here",
        team_counter[1]);
  shmem_team_destroy(upper);

  shmem_ctx_destroy(ctx);
  shmem_barrier_all();
  shmem_free(team_counter);
  shmem_free(sig);
  shmem_free(bits);
  shmem_free(u);
  shmem_free(l);
  shmem_free(s);
  shmem_free(d);
  const int status = finish("generic_ctx");
  shmem_finalize();
  return status;
}
