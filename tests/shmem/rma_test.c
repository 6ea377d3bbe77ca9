/* RMA: putmem/getmem, the typed put/get (+ _nbi, completed by shmem_quiet), the strided
 * iput/iget and the sized routines, on every standard RMA type, around a ring of PEs. Values are
 * small integers, exact in every type. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "shmem_check.h"

enum { kElems = 37 };

/* The value element i of PE pe's source holds. */
static int value_of(int pe, int i) { return (pe * 7 + i * 3) % 101; }

/* For each type: blocking put to the right neighbour, blocking get from it, nbi put and get
 * completed by shmem_quiet, and a stride-2 iput / stride-3 iget. */
#define DEFINE_TYPED_TEST(NAME, TYPE)                                                             \
  static void test_##NAME(void) {                                                                 \
    const int me = shmem_my_pe(), n = shmem_n_pes();                                              \
    const int right = (me + 1) % n, left = (me + n - 1) % n;                                      \
    TYPE* src = (TYPE*)shmem_malloc(3 * kElems * sizeof(TYPE));                                   \
    TYPE* dst = (TYPE*)shmem_malloc(3 * kElems * sizeof(TYPE));                                   \
    TYPE local[3 * kElems];                                                                       \
    for (int i = 0; i < 3 * kElems; ++i) src[i] = (TYPE)value_of(me, i);                          \
    memset(dst, 0, 3 * kElems * sizeof(TYPE));                                                    \
    shmem_barrier_all();                                                                          \
    shmem_##NAME##_put(dst, src, kElems, right);                                                  \
    shmem_barrier_all();                                                                          \
    for (int i = 0; i < kElems; ++i)                                                              \
      check(dst[i] == (TYPE)value_of(left, i), #NAME "_put: dst[%d] wrong", i);                   \
    shmem_##NAME##_get(local, src, kElems, right);                                                \
    for (int i = 0; i < kElems; ++i)                                                              \
      check(local[i] == (TYPE)value_of(right, i), #NAME "_get: local[%d] wrong", i);              \
    shmem_barrier_all();                                                                          \
    memset(dst, 0, 3 * kElems * sizeof(TYPE));                                                    \
    shmem_barrier_all();                                                                          \
    shmem_##NAME##_put_nbi(dst, src + 1, kElems, right);                                          \
    memset(local, 0, sizeof(local));                                                              \
    shmem_##NAME##_get_nbi(local, src + 2, kElems, left);                                         \
    shmem_quiet();                                                                                \
    for (int i = 0; i < kElems; ++i)                                                              \
      check(local[i] == (TYPE)value_of(left, i + 2), #NAME "_get_nbi: local[%d] wrong", i);       \
    shmem_barrier_all();                                                                          \
    for (int i = 0; i < kElems; ++i)                                                              \
      check(dst[i] == (TYPE)value_of(left, i + 1), #NAME "_put_nbi: dst[%d] wrong", i);           \
    memset(dst, 0, 3 * kElems * sizeof(TYPE));                                                    \
    shmem_barrier_all();                                                                          \
    shmem_##NAME##_iput(dst, src, 2, 3, kElems, right);                                           \
    shmem_barrier_all();                                                                          \
    for (int i = 0; i < kElems; ++i) {                                                            \
      check(dst[2 * i] == (TYPE)value_of(left, 3 * i), #NAME "_iput: dst[%d] wrong", 2 * i);      \
      if (2 * i + 1 < 3 * kElems)                                                                 \
        check(dst[2 * i + 1] == (TYPE)0, #NAME "_iput wrote the gap dst[%d]", 2 * i + 1);         \
    }                                                                                             \
    memset(local, 0, sizeof(local));                                                              \
    shmem_##NAME##_iget(local, src, 3, 2, kElems, right);                                         \
    for (int i = 0; i < kElems; ++i)                                                              \
      check(local[3 * i] == (TYPE)value_of(right, 2 * i), #NAME "_iget: local[%d] wrong", 3 * i); \
    shmem_free(dst);                                                                              \
    shmem_free(src);                                                                              \
  }
TESSERA_SHMEM_RMA_TYPES(DEFINE_TYPED_TEST)
#undef DEFINE_TYPED_TEST

/* putmem/getmem on a large and an odd-sized block, and the sized routines. */
static void test_bytes(void) {
  const int me = shmem_my_pe(), n = shmem_n_pes();
  const int right = (me + 1) % n, left = (me + n - 1) % n;
  const size_t bytes = ((size_t)1 << 20) + 13;
  unsigned char* src = (unsigned char*)shmem_malloc(bytes);
  unsigned char* dst = (unsigned char*)shmem_calloc(bytes, 1);
  unsigned char* local = (unsigned char*)malloc(bytes);
  for (size_t i = 0; i < bytes; ++i) src[i] = (unsigned char)(i * 31 + (size_t)me);
  shmem_barrier_all();
  shmem_putmem(dst, src, bytes, right);
  shmem_barrier_all();
  size_t wrong = 0;
  for (size_t i = 0; i < bytes; ++i) wrong += dst[i] != (unsigned char)(i * 31 + (size_t)left);
  check(wrong == 0, "putmem: %zu of %zu bytes wrong", wrong, bytes);
  shmem_getmem(local, src + 1, bytes - 1, right);
  wrong = 0;
  for (size_t i = 0; i + 1 < bytes; ++i)
    wrong += local[i] != (unsigned char)((i + 1) * 31 + (size_t)right);
  check(wrong == 0, "getmem: %zu bytes wrong", wrong);
  shmem_putmem_nbi(dst, src, 0, right); /* zero bytes: nothing moves */
  shmem_getmem_nbi(local, src, 64, left);
  shmem_quiet();
  check(local[5] == (unsigned char)(5 * 31 + left), "getmem_nbi: byte 5 wrong");
  shmem_barrier_all();

  uint64_t* words = (uint64_t*)dst;
  const uint64_t pattern[4] = {0x0102030405060708ull + (uint64_t)me, 2, 3, 4};
  memset(dst, 0, 64);
  shmem_barrier_all();
  shmem_put64(words, pattern, 4, right);
  shmem_put32(words + 4, pattern, 2, right);
  shmem_put16(words + 5, pattern, 1, right);
  shmem_put8(words + 6, pattern, 3, right);
  shmem_put128(words + 8, pattern, 2, right);
  shmem_barrier_all();
  check(words[0] == 0x0102030405060708ull + (uint64_t)left, "put64: word 0 wrong");
  uint64_t expect0 = 0x0102030405060708ull + (uint64_t)left;
  check(memcmp(words + 4, &expect0, 8) == 0, "put32 x2: bytes wrong");
  check(memcmp(words + 5, &expect0, 2) == 0, "put16: bytes wrong");
  check(memcmp(words + 6, &expect0, 3) == 0, "put8 x3: bytes wrong");
  check(words[8] == expect0 && words[9] == 2 && words[10] == 3 && words[11] == 4,
        "put128 x2: words wrong");
  uint64_t back[4] = {0, 0, 0, 0};
  shmem_get128(back, words + 8, 2, right);
  check(back[0] == 0x0102030405060708ull + (uint64_t)me && back[3] == 4, "get128 wrong");
  uint32_t halves[2] = {0, 0};
  shmem_iget32(halves, (uint32_t*)words, 1, 2, 2, right);
  check(halves[0] == (uint32_t)(0x05060708u + (uint32_t)me), "iget32 element 0 wrong");
  shmem_barrier_all();
  free(local);
  shmem_free(dst);
  shmem_free(src);
}

/* fence: a put, a fence, then a flag: a PE that sees the flag sees the put. */
static void test_fence(void) {
  const int me = shmem_my_pe(), n = shmem_n_pes();
  const int right = (me + 1) % n, left = (me + n - 1) % n;
  int* data = (int*)shmem_calloc(256, sizeof(int));
  int* flag = (int*)shmem_calloc(1, sizeof(int));
  int payload[256];
  for (int round = 1; round <= 20; ++round) {
    for (int i = 0; i < 256; ++i) payload[i] = round * 1000 + me + i;
    shmem_int_put(data, payload, 256, right);
    shmem_fence();
    shmem_int_p(flag, round, right);
    shmem_int_wait_until(flag, SHMEM_CMP_GE, round);
    int wrong = 0;
    for (int i = 0; i < 256; ++i) wrong += data[i] != round * 1000 + left + i;
    check(wrong == 0, "fence round %d: %d elements arrived after the flag", round, wrong);
    shmem_barrier_all(); /* the next round overwrites data */
  }
  shmem_free(flag);
  shmem_free(data);
}

int main(void) {
  shmem_init();
#define RUN_TYPED_TEST(NAME, TYPE) test_##NAME();
  TESSERA_SHMEM_RMA_TYPES(RUN_TYPED_TEST)
#undef RUN_TYPED_TEST
  test_bytes();
  test_fence();
  const int status = finish("rma");
  shmem_finalize();
  return status;
}
