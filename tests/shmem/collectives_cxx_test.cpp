// The collectives from C++: the header declares the complex reductions on std::complex (the
// layout of C's _Complex types), and the typed routines link with C++ callers.
#include <complex>
#include <cstdio>

#include "tessera/shmem.h"

int main() {
  shmem_init();
  const int me = shmem_my_pe(), n = shmem_n_pes();
  int failures = 0;
  auto* z = static_cast<std::complex<double>*>(shmem_malloc(3 * sizeof(std::complex<double>)));
  auto* w = static_cast<std::complex<float>*>(shmem_malloc(3 * sizeof(std::complex<float>)));
  for (int i = 0; i < 3; ++i) {
    z[i] = {double(me + i), 1.0};
    w[i] = {1.0f, float(me == i)};
  }
  if (shmem_complexd_sum_reduce(SHMEM_TEAM_WORLD, z, z, 3) != 0) ++failures;
  if (shmem_complexf_prod_reduce(SHMEM_TEAM_WORLD, w, w, 3) != 0) ++failures;
  for (int i = 0; i < 3; ++i) {
    // sum over PEs of (pe + i) + 1i; product over PEs of 1 + [pe == i] i.
    const std::complex<double> want_sum(n * (n - 1) / 2.0 + n * i, n);
    const std::complex<float> want_prod = i < n ? std::complex<float>(1, 1) : 1.0f;
    if (z[i] != want_sum) {
      std::fprintf(stderr, "PE %d: complexd sum[%d] = (%g, %g)\n", me, i, z[i].real(), z[i].imag());
      ++failures;
    }
    if (w[i] != want_prod) {
      std::fprintf(stderr, "PE %d: complexf prod[%d] = (%g, %g)\n", me, i, w[i].real(),
                   w[i].imag());
      ++failures;
    }
  }
  // The same reductions on C's complex types, as code shared with C passes them (a GNU extension
  // in C++: __extension__ keeps -Wpedantic quiet): the team form and the deprecated _to_all.
  __extension__ typedef double _Complex c_complexd;
  __extension__ typedef float _Complex c_complexf;
  auto* cz = static_cast<c_complexd*>(shmem_malloc(2 * sizeof(c_complexd)));
  auto* cw = static_cast<c_complexf*>(shmem_malloc(2 * sizeof(c_complexf)));
  auto* cs = static_cast<c_complexf*>(shmem_malloc(2 * sizeof(c_complexf)));
  auto* cs_out = static_cast<c_complexf*>(shmem_malloc(2 * sizeof(c_complexf)));
  static long psync[SHMEM_REDUCE_SYNC_SIZE];
  static c_complexf pwrk[SHMEM_REDUCE_MIN_WRKDATA_SIZE];
  for (int i = 0; i < 2; ++i) {
    __real__ cz[i] = me + i;
    __imag__ cz[i] = -1.0;
    __real__ cw[i] = 2.0f;
    __imag__ cw[i] = 0.0f;
    __real__ cs[i] = float(me);
    __imag__ cs[i] = float(i);
  }
  shmem_barrier_all();
  if (shmem_complexd_sum_reduce(SHMEM_TEAM_WORLD, cz, cz, 2) != 0) ++failures;
  if (shmem_complexf_prod_reduce(SHMEM_TEAM_WORLD, cw, cw, 2) != 0) ++failures;
  for (int i = 0; i < 2; ++i) {
    if (__real__ cz[i] != n * (n - 1) / 2.0 + n * i || __imag__ cz[i] != -n) {
      std::fprintf(stderr, "PE %d: C complexd sum[%d] = (%g, %g)\n", me, i, __real__ cz[i],
                   __imag__ cz[i]);
      ++failures;
    }
    if (__real__ cw[i] != float(1 << n) || __imag__ cw[i] != 0.0f) {
      std::fprintf(stderr, "PE %d: C complexf prod[%d] = (%g, %g)\n", me, i, __real__ cw[i],
                   __imag__ cw[i]);
      ++failures;
    }
  }
  shmem_barrier_all();
  shmem_complexf_sum_to_all(cs_out, cs, 2, 0, 0, n, pwrk, psync);
  for (int i = 0; i < 2; ++i) {
    if (__real__ cs_out[i] != float(n * (n - 1) / 2) || __imag__ cs_out[i] != float(n * i)) {
      std::fprintf(stderr, "PE %d: C complexf sum_to_all[%d] = (%g, %g)\n", me, i,
                   __real__ cs_out[i], __imag__ cs_out[i]);
      ++failures;
    }
  }
  shmem_barrier_all();
  shmem_free(cs_out);
  shmem_free(cs);
  shmem_free(cw);
  shmem_free(cz);

  long* l = static_cast<long*>(shmem_malloc(sizeof(long) * static_cast<size_t>(n)));
  long mine = 100 + me;
  long* src = static_cast<long*>(shmem_malloc(sizeof(long)));
  *src = mine;
  if (shmem_long_fcollect(SHMEM_TEAM_WORLD, l, src, 1) != 0) ++failures;
  for (int pe = 0; pe < n; ++pe) {
    if (l[pe] != 100 + pe) ++failures;
  }
  shmem_free(src);
  shmem_free(l);
  shmem_free(w);
  shmem_free(z);
  std::printf("PE %d of %d: C++ collectives: %s\n", me, n,
              failures == 0 ? "all checks passed" : "FAILED");
  shmem_finalize();
  return failures == 0 ? 0 : 1;
}
