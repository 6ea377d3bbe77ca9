/* Checks for the OpenSHMEM tests: each test is a program run as N processes under mpirun; a
 * failed check prints the PE and what was expected and seen, and the program exits non-zero. */
#ifndef TESSERA_TESTS_SHMEM_CHECK_H
#define TESSERA_TESTS_SHMEM_CHECK_H

#include <stdarg.h>
#include <stdio.h>

#include "tessera/shmem.h"

static int shmem_check_failures = 0;

/* Records a failure unless `ok`; the message says what was expected and what was seen. */
static inline void check(int ok, const char* format, ...) {
  va_list args;
  if (ok) return;
  ++shmem_check_failures;
  fprintf(stderr, "PE %d: FAILED: ", shmem_my_pe());
  va_start(args, format);
  vfprintf(stderr, format, args);
  va_end(args);
  fputc('\n', stderr);
}

/* Reports the result of this PE; returns the process's exit status. Call before
 * shmem_finalize. */
static inline int finish(const char* test) {
  if (shmem_check_failures == 0) {
    printf("PE %d of %d: %s: all checks passed\n", shmem_my_pe(), shmem_n_pes(), test);
  } else {
    printf("PE %d of %d: %s: %d checks FAILED\n", shmem_my_pe(), shmem_n_pes(), test,
           shmem_check_failures);
  }
  fflush(stdout);
  return shmem_check_failures == 0 ? 0 : 1;
}

#endif
