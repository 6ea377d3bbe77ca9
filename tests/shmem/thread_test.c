/* Thread levels (OpenSHMEM 1.5 section 9.2): shmem_init_thread grants SHMEM_THREAD_MULTIPLE and
 * shmem_query_thread reports it; then 4 threads per PE do puts, gets and AMOs at once, each on
 * its own slots and all on one shared counter, each thread with its own context too. */
#include <pthread.h>

#include "shmem_check.h"

enum { kThreads = 4, kRounds = 200 };

static long* slots;   /* [n_pes][kThreads]: slot [p][t] written by thread t of PE p */
static long* counter; /* on every PE: incremented by every thread of every PE */
static int thread_failures[kThreads];

static void* work(void* arg) {
  const int t = (int)(long)arg;
  const int me = shmem_my_pe();
  const int n = shmem_n_pes();
  shmem_ctx_t ctx = SHMEM_CTX_DEFAULT;
  if (t % 2 == 1 && shmem_ctx_create(SHMEM_CTX_PRIVATE, &ctx) != 0) ctx = SHMEM_CTX_DEFAULT;
  for (int r = 0; r < kRounds; ++r) {
    const int pe = (me + r) % n;
    const long value = 1000000L * me + 1000L * t + r;
    shmem_ctx_long_p(ctx, &slots[me * kThreads + t], value, pe);
    shmem_ctx_quiet(ctx);
    if (shmem_ctx_long_g(ctx, &slots[me * kThreads + t], pe) != value) ++thread_failures[t];
    shmem_ctx_long_atomic_inc(ctx, counter, pe);
  }
  if (ctx != SHMEM_CTX_DEFAULT) shmem_ctx_destroy(ctx);
  return NULL;
}

int main(void) {
  int provided = -1;
  const int rc = shmem_init_thread(SHMEM_THREAD_MULTIPLE, &provided);
  check(rc == 0 && provided == SHMEM_THREAD_MULTIPLE, "init_thread gave rc %d, level %d", rc,
        provided);
  int queried = -1;
  shmem_query_thread(&queried);
  check(queried == SHMEM_THREAD_MULTIPLE, "query_thread says %d", queried);
  const int n = shmem_n_pes();
  slots = (long*)shmem_calloc((size_t)n * kThreads, sizeof(long));
  counter = (long*)shmem_calloc(1, sizeof(long));
  pthread_t threads[kThreads];
  for (long t = 0; t < kThreads; ++t) pthread_create(&threads[t], NULL, work, (void*)t);
  for (int t = 0; t < kThreads; ++t) pthread_join(threads[t], NULL);
  shmem_barrier_all();
  for (int t = 0; t < kThreads; ++t) {
    check(thread_failures[t] == 0, "thread %d read back %d wrong values", t, thread_failures[t]);
  }
  /* Every PE's threads did kRounds increments spread over the PEs round-robin. */
  long total = 0;
  for (int p = 0; p < n; ++p) total += shmem_long_atomic_fetch(counter, p);
  check(total == (long)n * kThreads * kRounds, "counters sum to %ld, expected %ld", total,
        (long)n * kThreads * kRounds);
  const int status = finish("thread");
  shmem_free(counter);
  shmem_free(slots);
  shmem_finalize();
  return status;
}
