/* Communication contexts (OpenSHMEM 1.5 section 9.4): contexts made with every option, RMA,
 * AMOs and put-with-signal through them, fence/quiet per context, a team context numbering its
 * target PEs in its team, shmem_ctx_get_team, and the refused creates. */
#include <stdint.h>

#include "shmem_check.h"

enum { kBig = 1 << 17 };

/* A large put_nbi of kBig longs on `data_ctx` to the right neighbour, then `order` (quiet or
 * fence) on `data_ctx`, then a flag put on `flag_ctx` (a plain put, not ordered by itself): the
 * target, once it sees the flag, must see the whole block. On another node all of it goes
 * through the proxy, which would otherwise deliver the small flag while the block's later chunks
 * are still on their way. */
static void put_then_flag(shmem_ctx_t data_ctx, void (*order)(shmem_ctx_t), shmem_ctx_t flag_ctx,
                          long round, const char* what) {
  const int me = shmem_my_pe(), n = shmem_n_pes();
  const int right = (me + 1) % n, left = (me + n - 1) % n;
  long* big = (long*)shmem_calloc(kBig, sizeof(long));
  long* source = (long*)shmem_calloc(kBig, sizeof(long));
  long* flag = (long*)shmem_calloc(1, sizeof(long));
  for (int i = 0; i < kBig; ++i) source[i] = 1000000L * round + 1000L * me + i;
  shmem_barrier_all();
  shmem_ctx_long_put_nbi(data_ctx, big, source, kBig, right);
  order(data_ctx);
  shmem_ctx_long_p(flag_ctx, flag, 1, right);
  shmem_long_wait_until(flag, SHMEM_CMP_EQ, 1);
  int wrong = 0;
  for (int i = 0; i < kBig; ++i) wrong += big[i] != 1000000L * round + 1000L * left + i;
  check(wrong == 0, "%d of %d elements of a put_nbi missing after its context's %s", wrong, kBig,
        what);
  shmem_barrier_all();
  shmem_free(flag);
  shmem_free(source);
  shmem_free(big);
}

int main(void) {
  shmem_init();
  const int me = shmem_my_pe();
  const int n = shmem_n_pes();
  const int right = (me + 1) % n;
  long* slots = (long*)shmem_calloc(4, sizeof(long));
  long* counter = (long*)shmem_calloc(1, sizeof(long));
  uint64_t* sig = (uint64_t*)shmem_calloc(1, sizeof(uint64_t));
  long* team_slot = (long*)shmem_calloc(1, sizeof(long));

  const long options[3] = {SHMEM_CTX_PRIVATE, SHMEM_CTX_SERIALIZED, SHMEM_CTX_NOSTORE};
  shmem_ctx_t ctx[3];
  for (int i = 0; i < 3; ++i) {
    check(shmem_ctx_create(options[i], &ctx[i]) == 0, "ctx_create(option %ld) failed", options[i]);
    shmem_team_t team = SHMEM_TEAM_INVALID;
    check(shmem_ctx_get_team(ctx[i], &team) == 0 && team == SHMEM_TEAM_WORLD,
          "ctx_get_team of a ctx_create context is not SHMEM_TEAM_WORLD");
  }
  shmem_team_t team = SHMEM_TEAM_INVALID;
  check(shmem_ctx_get_team(SHMEM_CTX_DEFAULT, &team) == 0 && team == SHMEM_TEAM_WORLD,
        "ctx_get_team(SHMEM_CTX_DEFAULT) is not SHMEM_TEAM_WORLD");
  check(shmem_ctx_get_team(SHMEM_CTX_INVALID, &team) != 0 && team == SHMEM_TEAM_INVALID,
        "ctx_get_team(SHMEM_CTX_INVALID) did not fail");
  shmem_ctx_t bad = SHMEM_CTX_DEFAULT;
  check(shmem_ctx_create(1L << 20, &bad) != 0 && bad == SHMEM_CTX_INVALID,
        "ctx_create with an unknown option did not fail with SHMEM_CTX_INVALID");
  check(shmem_team_create_ctx(SHMEM_TEAM_INVALID, 0, &bad) != 0 && bad == SHMEM_CTX_INVALID,
        "team_create_ctx(SHMEM_TEAM_INVALID) did not fail");

  /* Each context puts its own slot to the right neighbour; the value is seen after that
   * context's quiet and a barrier. */
  for (int i = 0; i < 3; ++i) {
    const long value = 100 * me + i;
    shmem_ctx_long_put_nbi(ctx[i], &slots[i], &value, 1, right);
    shmem_ctx_quiet(ctx[i]);
  }
  shmem_ctx_long_p(SHMEM_CTX_DEFAULT, &slots[3], 7 + me, right);
  shmem_barrier_all();
  const int left = (me + n - 1) % n;
  for (int i = 0; i < 3; ++i) {
    check(slots[i] == 100 * left + i, "slot %d is %ld, expected %d", i, slots[i], 100 * left + i);
  }
  check(slots[3] == 7 + left, "default-ctx p gave %ld, expected %d", slots[3], 7 + left);
  check(shmem_ctx_long_g(ctx[0], &slots[0], right) == 100 * me,
        "ctx g from the right neighbour gave the wrong value");

  /* A context's quiet completes that context's non-blocking puts (then a flag through another
   * context), and a context's fence orders them (then a flag through the same context). */
  put_then_flag(ctx[0], shmem_ctx_quiet, ctx[1], 1, "quiet");
  put_then_flag(ctx[2], shmem_ctx_fence, ctx[2], 2, "fence");

  /* AMOs on different contexts are atomic with respect to each other. */
  for (int i = 0; i < 3; ++i) shmem_ctx_long_atomic_inc(ctx[i], counter, 0);
  (void)shmem_ctx_long_atomic_fetch_add(ctx[1], counter, 10, 0);
  shmem_barrier_all();
  if (me == 0) check(*counter == 13L * n, "counter is %ld, expected %ld", *counter, 13L * n);

  /* put-with-signal and fence on a context: data first, then the signal. */
  const long payload = 5000 + me;
  shmem_ctx_long_put(ctx[2], &slots[0], &payload, 1, right);
  shmem_ctx_fence(ctx[2]);
  shmem_ctx_long_put_signal(ctx[2], &slots[1], &payload, 1, sig, 1, SHMEM_SIGNAL_ADD, right);
  shmem_signal_wait_until(sig, SHMEM_CMP_EQ, 1);
  check(slots[0] == 5000 + left && slots[1] == 5000 + left,
        "after the signal the puts are %ld, %ld, expected %d", slots[0], slots[1], 5000 + left);
  shmem_barrier_all();

  /* A team context numbers target PEs in its team: the odd PEs' team, PE k of it is world PE
   * 2k + 1. */
  shmem_team_t odd = SHMEM_TEAM_INVALID;
  shmem_team_split_strided(SHMEM_TEAM_WORLD, 1, 2, n / 2, NULL, 0, &odd);
  if (odd != SHMEM_TEAM_INVALID) {
    shmem_ctx_t tctx = SHMEM_CTX_INVALID;
    check(shmem_team_create_ctx(odd, SHMEM_CTX_PRIVATE, &tctx) == 0, "team_create_ctx failed");
    shmem_team_t got = SHMEM_TEAM_INVALID;
    check(shmem_ctx_get_team(tctx, &got) == 0 && got == odd, "ctx_get_team is not the team");
    const int tme = shmem_team_my_pe(odd);
    const int tn = shmem_team_n_pes(odd);
    shmem_ctx_long_atomic_add(tctx, team_slot, 1 + me, (tme + 1) % tn);
    shmem_ctx_quiet(tctx);
    shmem_ctx_destroy(tctx);
  } else {
    /* Outside the team (the spec's team-context example): shmem_team_create_ctx gives
     * SHMEM_CTX_INVALID, on which quiet, fence and destroy perform no operation. */
    shmem_ctx_t none = SHMEM_CTX_DEFAULT;
    check(shmem_team_create_ctx(odd, 0, &none) != 0 && none == SHMEM_CTX_INVALID,
          "team_create_ctx outside the team did not give SHMEM_CTX_INVALID");
    shmem_ctx_quiet(none);
    shmem_ctx_fence(none);
    shmem_ctx_destroy(none);
  }
  shmem_barrier_all();
  if (odd != SHMEM_TEAM_INVALID) {
    const int tn = shmem_team_n_pes(odd);
    const int from = 2 * ((shmem_team_my_pe(odd) + tn - 1) % tn) + 1;
    check(*team_slot == 1 + from, "team-ctx add gave %ld, expected %d", *team_slot, 1 + from);
    shmem_team_destroy(odd);
  } else {
    check(*team_slot == 0, "even PE %d got a team-ctx add (%ld)", me, *team_slot);
  }

  for (int i = 0; i < 3; ++i) shmem_ctx_destroy(ctx[i]);
  shmem_ctx_destroy(SHMEM_CTX_INVALID); /* ignored */
  const int status = finish("context");
  shmem_free(team_slot);
  shmem_free(sig);
  shmem_free(counter);
  shmem_free(slots);
  shmem_finalize();
  return status;
}
