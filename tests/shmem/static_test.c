/* Static and global symmetric data (OpenSHMEM 1.5 §3: global and static variables are
 * symmetric): static and global objects of every standard RMA type as targets of put, get, p, g,
 * iput, iget, AMOs, put-with-signal, signal waits and wait_until, shmem_ptr and
 * shmem_addr_accessible on them, and initialised statics, which every PE sees with its own
 * initial value (and whatever it stored before shmem_init) before any put. Values are small
 * integers, exact in every type. */
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "shmem_check.h"

enum { kElems = 29 };

/* Initialised data (.data) and zero-initialised data (.bss), global and static. */
long initialised_global = 1234;
static int initialised_array[4] = {1, 2, 3, 4};
long counter;
static long pid_before_init;
static uint64_t signal_word;
static int flags[8];
static long lock;
static long protected_total;

static int value_of(int pe, int i) { return (pe * 5 + i * 3) % 97; }

/* For each type: a static source and destination (3 * kElems elements: room for strides), put
 * and get around the ring, p and g, iput and iget. */
#define DEFINE_TYPED_TEST(NAME, TYPE)                                                              \
  static TYPE src_##NAME[3 * kElems];                                                              \
  static TYPE dst_##NAME[3 * kElems];                                                              \
  static void test_##NAME(void) {                                                                  \
    const int me = shmem_my_pe(), n = shmem_n_pes();                                               \
    const int right = (me + 1) % n, left = (me + n - 1) % n;                                       \
    TYPE local[3 * kElems];                                                                        \
    for (int i = 0; i < 3 * kElems; ++i) src_##NAME[i] = (TYPE)value_of(me, i);                    \
    memset(dst_##NAME, 0, sizeof(dst_##NAME));                                                     \
    shmem_barrier_all();                                                                           \
    shmem_##NAME##_put(dst_##NAME, src_##NAME, kElems, right);                                     \
    shmem_barrier_all();                                                                           \
    for (int i = 0; i < kElems; ++i)                                                               \
      check(dst_##NAME[i] == (TYPE)value_of(left, i), #NAME "_put to a static: dst[%d] wrong", i); \
    shmem_##NAME##_get(local, src_##NAME, kElems, right);                                          \
    for (int i = 0; i < kElems; ++i)                                                               \
      check(local[i] == (TYPE)value_of(right, i), #NAME "_get from a static: local[%d] wrong", i); \
    check(shmem_##NAME##_g(&src_##NAME[5], left) == (TYPE)value_of(left, 5),                       \
          #NAME "_g from a static wrong");                                                         \
    shmem_barrier_all();                                                                           \
    memset(dst_##NAME, 0, sizeof(dst_##NAME));                                                     \
    shmem_barrier_all();                                                                           \
    shmem_##NAME##_p(&dst_##NAME[kElems], (TYPE)value_of(me, 77), right);                          \
    shmem_##NAME##_iput(dst_##NAME, src_##NAME, 2, 3, kElems / 2, right);                          \
    shmem_barrier_all();                                                                           \
    check(dst_##NAME[kElems] == (TYPE)value_of(left, 77), #NAME "_p to a static wrong");           \
    for (int i = 0; i < kElems / 2; ++i) {                                                         \
      check(dst_##NAME[2 * i] == (TYPE)value_of(left, 3 * i), #NAME "_iput: dst[%d] wrong",        \
            2 * i);                                                                                \
      check(dst_##NAME[2 * i + 1] == (TYPE)0, #NAME "_iput wrote the gap dst[%d]", 2 * i + 1);     \
    }                                                                                              \
    memset(local, 0, sizeof(local));                                                               \
    shmem_##NAME##_iget(local, src_##NAME, 3, 2, kElems / 2, left);                                \
    for (int i = 0; i < kElems / 2; ++i)                                                           \
      check(local[3 * i] == (TYPE)value_of(left, 2 * i), #NAME "_iget: local[%d] wrong", 3 * i);   \
    shmem_barrier_all();                                                                           \
  }
TESSERA_SHMEM_RMA_TYPES(DEFINE_TYPED_TEST)
#undef DEFINE_TYPED_TEST

#define RUN_TYPED_TEST(NAME, TYPE) test_##NAME();

/* AMOs on a global: every PE adds to PE 0's counter, fetch-adds, swaps and compare-swaps. */
static void test_amos(void) {
  const int me = shmem_my_pe(), n = shmem_n_pes();
  counter = 0;
  shmem_barrier_all();
  shmem_long_atomic_inc(&counter, 0);
  shmem_long_atomic_add(&counter, 10, 0);
  shmem_barrier_all();
  if (me == 0)
    check(counter == 11L * n, "atomic inc/add on a global: %ld, not %ld", counter, 11L * n);
  shmem_barrier_all();
  const long before = shmem_long_atomic_fetch_add(&counter, 1, (me + 1) % n);
  check(before >= 0, "atomic_fetch_add on a global returned %ld", before);
  shmem_barrier_all();
  counter = me;
  shmem_barrier_all();
  const long swapped =
      shmem_long_atomic_compare_swap(&counter, (me + 1) % n, 100 + me, (me + 1) % n);
  check(swapped == (me + 1) % n, "compare_swap on a global saw %ld, not %d", swapped, (me + 1) % n);
  shmem_barrier_all();
  check(counter == 100 + (me + n - 1) % n, "compare_swap left %ld", counter);
  check(shmem_long_atomic_fetch(&counter, me) == counter, "atomic_fetch of own global");
  shmem_barrier_all();
}

/* Put-with-signal into statics, waited for with signal_wait_until, and a flag array waited for
 * with wait_until and wait_until_all. */
static void test_signals_and_waits(void) {
  const int me = shmem_my_pe(), n = shmem_n_pes();
  const int right = (me + 1) % n;
  static long payload[16];
  long mine[16];
  for (int i = 0; i < 16; ++i) mine[i] = me * 100 + i;
  signal_word = 0;
  memset(flags, 0, sizeof(flags));
  shmem_barrier_all();
  shmem_long_put_signal(payload, mine, 16, &signal_word, 1, SHMEM_SIGNAL_ADD, right);
  const uint64_t seen = shmem_signal_wait_until(&signal_word, SHMEM_CMP_GE, 1);
  check(seen == 1, "signal_wait_until on a static returned %llu", (unsigned long long)seen);
  const int left = (me + n - 1) % n;
  for (int i = 0; i < 16; ++i) check(payload[i] == left * 100 + i, "put_signal payload[%d]", i);
  /* A heap signal guarding static data, and the other way round. */
  uint64_t* heap_signal = (uint64_t*)shmem_calloc(1, sizeof(uint64_t));
  shmem_barrier_all();
  for (int i = 0; i < 16; ++i) mine[i] = me * 100 + 50 + i;
  shmem_long_put_signal(payload, mine, 4, heap_signal, 7, SHMEM_SIGNAL_SET, right);
  check(shmem_signal_wait_until(heap_signal, SHMEM_CMP_EQ, 7) == 7, "heap signal for static data");
  for (int i = 0; i < 4; ++i)
    check(payload[i] == left * 100 + 50 + i, "static payload under a heap signal [%d]", i);
  static long heap_payload_source[4];
  long* heap_payload = (long*)shmem_calloc(4, sizeof(long));
  for (int i = 0; i < 4; ++i) heap_payload_source[i] = me * 10 + i;
  signal_word = 0;
  shmem_barrier_all();
  shmem_long_put_signal(heap_payload, heap_payload_source, 4, &signal_word, 1, SHMEM_SIGNAL_ADD,
                        right);
  shmem_signal_wait_until(&signal_word, SHMEM_CMP_EQ, 1);
  for (int i = 0; i < 4; ++i)
    check(heap_payload[i] == left * 10 + i, "heap payload under a static signal [%d]", i);
  shmem_barrier_all();
  shmem_free(heap_payload);
  shmem_barrier_all();
  shmem_int_p(&flags[me % 8], 1, right);
  shmem_int_wait_until(&flags[left % 8], SHMEM_CMP_EQ, 1);
  check(shmem_int_test(&flags[left % 8], SHMEM_CMP_EQ, 1) == 1, "int_test on a static");
  shmem_barrier_all();
  for (int i = 0; i < 8; ++i) shmem_int_p(&flags[i], 2, right);
  shmem_int_wait_until_all(flags, 8, NULL, SHMEM_CMP_EQ, 2);
  shmem_barrier_all();
  shmem_free(heap_signal);
}

/* A lock that is a static long, guarding a non-atomic total on PE 0. */
static void test_lock(void) {
  const int n = shmem_n_pes();
  protected_total = 0;
  shmem_barrier_all();
  for (int round = 0; round < 50; ++round) {
    shmem_set_lock(&lock);
    const long t = shmem_long_g(&protected_total, 0);
    shmem_long_p(&protected_total, t + 1, 0);
    shmem_quiet();
    shmem_clear_lock(&lock);
  }
  shmem_barrier_all();
  if (shmem_my_pe() == 0)
    check(protected_total == 50L * n, "static lock: total %ld, not %ld", protected_total, 50L * n);
}

/* shmem_ptr and shmem_addr_accessible: every PE is accessible; those of this node
 * (SHMEM_TEAM_SHARED) by load/store, through shmem_ptr, the others (another node) through the
 * network proxy, with shmem_ptr NULL. */
static void test_ptr(void) {
  const int me = shmem_my_pe(), n = shmem_n_pes();
  check(shmem_addr_accessible(&initialised_global, me), "own global not accessible");
  for (int pe = 0; pe < n; ++pe) {
    const int shared = shmem_team_translate_pe(SHMEM_TEAM_WORLD, pe, SHMEM_TEAM_SHARED) >= 0;
    long* remote = (long*)shmem_ptr(&initialised_global, pe);
    check((remote != NULL) == shared, "shmem_ptr of a global on PE %d is %p, but the PE is %s",
          pe, (void*)remote, shared ? "mapped" : "on another node");
    check(shmem_addr_accessible(&initialised_global, pe), "global on PE %d not accessible", pe);
    if (pe == me) check(remote == &initialised_global, "shmem_ptr on self is not the address");
  }
  shmem_barrier_all();
  initialised_global = 1000 + me;
  shmem_barrier_all();
  const int right_pe = (me + 1) % n;
  const long* right = (const long*)shmem_ptr(&initialised_global, right_pe);
  const long seen = right != NULL ? *right : shmem_long_g(&initialised_global, right_pe);
  check(seen == 1000 + right_pe, "load of PE %d's global: %ld", right_pe, seen);
  long stack_value = 0;
  check(!shmem_addr_accessible(&stack_value, me), "a stack variable is accessible");
  check(shmem_ptr(&stack_value, me) == NULL, "shmem_ptr of a stack variable is not NULL");
  shmem_barrier_all();
}

/* Team collectives with static source and destination. */
static void test_collectives(void) {
  const int me = shmem_my_pe(), n = shmem_n_pes();
  static long bcast[8], sums_in[8], sums_out[8];
  for (int i = 0; i < 8; ++i) {
    bcast[i] = me == 1 % n ? 500 + i : -1;
    sums_in[i] = me + i;
  }
  shmem_barrier_all();
  shmem_long_broadcast(SHMEM_TEAM_WORLD, bcast, bcast, 8, 1 % n);
  for (int i = 0; i < 8; ++i)
    check(bcast[i] == 500 + i, "broadcast into a static: [%d] %ld", i, bcast[i]);
  shmem_long_sum_reduce(SHMEM_TEAM_WORLD, sums_out, sums_in, 8);
  for (int i = 0; i < 8; ++i) {
    const long want = (long)n * (n - 1) / 2 + (long)n * i;
    check(sums_out[i] == want, "sum_reduce of statics: [%d] %ld, not %ld", i, sums_out[i], want);
  }
  shmem_barrier_all();
}

int main(void) {
  pid_before_init = (long)getpid();
  shmem_init();
  /* Before any put: each PE's own initial values, and what it stored before shmem_init. */
  check(initialised_global == 1234, "initialised global is %ld after shmem_init",
        initialised_global);
  for (int i = 0; i < 4; ++i)
    check(initialised_array[i] == i + 1, "initialised static [%d] is %d", i, initialised_array[i]);
  check(pid_before_init == (long)getpid(), "a static stored before shmem_init was lost");
  shmem_barrier_all();
  TESSERA_SHMEM_RMA_TYPES(RUN_TYPED_TEST)
  test_amos();
  test_signals_and_waits();
  test_lock();
  test_ptr();
  test_collectives();
  const int status = finish("static");
  shmem_finalize();
  return status;
}
