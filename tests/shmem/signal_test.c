/* Signals: putmem_signal with SHMEM_SIGNAL_SET around a ring (the receiver sees the whole block
 * once it sees the signal), SHMEM_SIGNAL_ADD from every PE into one PE, the _nbi forms completed
 * by shmem_quiet, typed and sized put_signal, signal_fetch. */
#include <stdint.h>
#include <string.h>

#include "shmem_check.h"

enum { kBlock = 4096 };

int main(void) {
  shmem_init();
  const int me = shmem_my_pe(), n = shmem_n_pes();
  const int right = (me + 1) % n, left = (me + n - 1) % n;
  unsigned char* inbox = (unsigned char*)shmem_calloc(kBlock, 1);
  uint64_t* sig = (uint64_t*)shmem_calloc(4, sizeof(uint64_t));
  unsigned char* slots = (unsigned char*)shmem_calloc((size_t)n, kBlock);
  unsigned char block[kBlock];

  check(shmem_signal_fetch(sig) == 0, "signal_fetch at start is %llu",
        (unsigned long long)shmem_signal_fetch(sig));
  shmem_barrier_all(); /* every PE has looked before any signal arrives */

  /* SET, epoch values: round r's signal is r. The block is read once the signal shows r. */
  for (uint64_t round = 1; round <= 30; ++round) {
    memset(block, (int)((round * 13 + (uint64_t)me) & 0xff), kBlock);
    shmem_putmem_signal(inbox, block, kBlock, &sig[0], round, SHMEM_SIGNAL_SET, right);
    const uint64_t seen = shmem_signal_wait_until(&sig[0], SHMEM_CMP_GE, round);
    check(seen == round, "round %llu: signal_wait_until returned %llu", (unsigned long long)round,
          (unsigned long long)seen);
    const unsigned char expect = (unsigned char)((round * 13 + (uint64_t)left) & 0xff);
    int wrong = 0;
    for (int i = 0; i < kBlock; ++i) wrong += inbox[i] != expect;
    check(wrong == 0, "round %llu: %d bytes not there when the signal was",
          (unsigned long long)round, wrong);
    check(shmem_signal_fetch(&sig[0]) == round, "signal_fetch after round %llu",
          (unsigned long long)round);
    shmem_barrier_all(); /* the next round overwrites inbox */
  }

  /* ADD: every PE puts its slot on PE 0 and adds 1; PE 0 waits for n and sees every slot. */
  memset(block, me + 1, kBlock);
  shmem_putmem_signal(slots + (size_t)me * kBlock, block, kBlock, &sig[1], 1, SHMEM_SIGNAL_ADD, 0);
  if (me == 0) {
    const uint64_t seen = shmem_signal_wait_until(&sig[1], SHMEM_CMP_EQ, (uint64_t)n);
    check(seen == (uint64_t)n, "ADD: signal %llu, expected %d", (unsigned long long)seen, n);
    for (int pe = 0; pe < n; ++pe)
      check(slots[(size_t)pe * kBlock + kBlock - 1] == pe + 1, "ADD: slot of PE %d missing", pe);
  }
  shmem_barrier_all();

  /* _nbi: complete after shmem_quiet; the signal still follows the data. */
  memset(block, 0x5a + me, kBlock);
  shmem_putmem_signal_nbi(inbox, block, kBlock, &sig[2], 42, SHMEM_SIGNAL_SET, right);
  shmem_quiet();
  shmem_signal_wait_until(&sig[2], SHMEM_CMP_EQ, 42);
  check(inbox[100] == (unsigned char)(0x5a + left), "putmem_signal_nbi: data missing");
  shmem_barrier_all();

  /* Typed and sized forms. */
  int* ints = (int*)shmem_calloc(8, sizeof(int));
  int src[8];
  for (int i = 0; i < 8; ++i) src[i] = me * 100 + i;
  shmem_int_put_signal(ints, src, 8, &sig[3], 1, SHMEM_SIGNAL_ADD, right);
  shmem_signal_wait_until(&sig[3], SHMEM_CMP_GE, 1);
  check(ints[7] == left * 100 + 7, "int_put_signal: ints[7] = %d", ints[7]);
  shmem_barrier_all();
  uint64_t wide[2] = {(uint64_t)me, 77};
  shmem_put64_signal_nbi(ints, wide, 2, &sig[3], 1, SHMEM_SIGNAL_ADD, right);
  shmem_quiet();
  shmem_signal_wait_until(&sig[3], SHMEM_CMP_EQ, 2);
  check(((uint64_t*)ints)[0] == (uint64_t)left && ((uint64_t*)ints)[1] == 77,
        "put64_signal_nbi: data wrong");
  shmem_barrier_all();

  shmem_free(ints);
  shmem_free(slots);
  shmem_free(sig);
  shmem_free(inbox);
  const int status = finish("signal");
  shmem_finalize();
  return status;
}
