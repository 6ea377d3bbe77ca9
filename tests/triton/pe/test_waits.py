"""test, test_all, test_any, test_some and wait_until_some: the tests read without waiting and see exactly
the signals that hold; wait_until_some drains several arrivals through its status words without
a signal ever being reset (epochs), skips what its status marks, and returns 0 at once when
nothing is left to wait for. Signals come from the left neighbour (through the proxy when it is
on another node)."""

import numpy as np
import pytest
import torch

import tessera.triton as tx
from conftest import neighbours, rng_of, sym
from tx_kernels import drain, signal_each, signal_tests, sweep_signals, wait_some

N = 8

# cmp, target; a signal value for which the comparison holds and one for which it fails.
COMPARISONS = [
    (tx.EQ, 7, 7, 3),
    (tx.NE, 7, 8, 7),
    (tx.GT, 7, 9, 7),
    (tx.GE, 7, 7, 6),
    (tx.LT, 7, 6, 7),
    (tx.LE, 7, 7, 8),
]
CMP_IDS = ["eq", "ne", "gt", "ge", "lt", "le"]


def run_tests(rt, ctx, sig_t, value, n, cmp):
    out = torch.full((N + 3, ), -5, dtype=torch.int64)
    signal_tests[(1, )](sig_t, value, out, ctx, n, N=N, CMP=cmp)
    o = out.numpy()
    return o[:N].astype(bool), bool(o[N]), bool(o[N + 1]), int(o[N + 2])


@pytest.mark.parametrize("cmp,target,holds,fails", COMPARISONS, ids=CMP_IDS)
def test_tests_see_exactly_the_signals_that_hold(rt, ctx, cmp, target, holds, fails):
    """The left neighbour sets a pattern of `holds` and `fails` values into this PE's signals;
    after the barrier test gives the pattern, test_all and test_any what it implies."""
    right, left = neighbours(rt)
    sig, sig_t = sym(rt, N, "uint64", fails)
    pattern = lambda pe: np.array([(pe + k) % 3 == 0 for k in range(N)])  # noqa: E731
    order = torch.tensor(np.flatnonzero(pattern(right)), dtype=torch.int64)
    rt.barrier()
    signal_each[(1, )](sig_t, order, holds, right, ctx, len(order))
    rt.barrier()
    want = pattern(rt.pe)
    each, first, all_n, any_n = run_tests(rt, ctx, sig_t, target, N, cmp)
    assert np.array_equal(each, want), (each, want)
    assert first == want[0]
    assert all_n == want.all()
    assert any_n == (int(np.flatnonzero(want)[0]) if want.any() else -1)
    rt.barrier()


def test_test_all_and_test_any_see_only_the_masked_in_signals(rt, ctx):
    sig, sig_t = sym(rt, N, "uint64")
    sig_t[:] = torch.tensor([5, 5, 5, 0, 0, 5, 0, 5], dtype=torch.uint64)
    for n, all_n, any_n in [(3, True, 0), (4, False, 0), (0, True, -1)]:
        _, _, a, f = run_tests(rt, ctx, sig_t, 5, n, tx.EQ)
        assert (a, f) == (all_n, any_n), n
    sig_t[:3] = 0
    _, _, a, f = run_tests(rt, ctx, sig_t, 5, 6, tx.EQ)
    assert (a, f) == (False, 5)
    _, _, a, f = run_tests(rt, ctx, sig_t, 5, 5, tx.EQ)
    assert (a, f) == (False, tx.NPOS.value)
    rt.barrier()


def call_some(rt, ctx, sig_t, status, value, n=N, cmp=tx.GE):
    indices = torch.full((N, ), -1, dtype=torch.int64)
    count = torch.full((1, ), -5, dtype=torch.int32)
    wait_some[(1, )](sig_t, status, indices, count, value, ctx, n, N=N, CMP=cmp)
    c = int(count.item())
    assert (indices.numpy()[c:] == -1).all(), "only indices[:count] are written"
    return c, list(indices.numpy()[:c])


def test_wait_until_some_drains_arrivals_over_epochs_without_resetting_signals(rt, ctx):
    """Two epochs over the same signals, never reset. In each the left neighbour signals half
    the signals, then the rest; each wait_until_some finds exactly the newly arrived half (the
    status words skip the first half, whose signals still hold), and a third call returns 0 at
    once: nothing is left to wait for."""
    right, left = neighbours(rt)
    sig, sig_t = sym(rt, N, "uint64")
    perm = lambda pe: rng_of(pe).permutation(N)  # noqa: E731
    for epoch in (1, 2):
        status = torch.zeros(N, dtype=torch.int32)
        halves = [perm(right)[:N // 2], perm(right)[N // 2:]]
        mine = [sorted(perm(rt.pe)[:N // 2]), sorted(perm(rt.pe)[N // 2:])]
        for h in range(2):
            rt.barrier()
            signal_each[(1, )](sig_t, torch.tensor(halves[h], dtype=torch.int64), epoch, right,
                               ctx, N // 2)
            rt.barrier()
            c, idx = call_some(rt, ctx, sig_t, status, epoch)
            assert (c, idx) == (N // 2, mine[h]), (epoch, h)
            found = sorted(mine[0] + mine[1]) if h else mine[0]
            assert np.array_equal(np.flatnonzero(status.numpy()), found)
        assert call_some(rt, ctx, sig_t, status, epoch) == (0, [])
        assert (sig_t.numpy() == epoch).all()
    rt.barrier()


def test_wait_until_some_while_signals_arrive_finds_each_exactly_once(rt, ctx):
    """The left neighbour signals all N one after another while this PE drains them."""
    right, left = neighbours(rt)
    sig, sig_t = sym(rt, N, "uint64")
    status = torch.zeros(N, dtype=torch.int32)
    indices = torch.full((2 * N, ), -1, dtype=torch.int64)
    calls = torch.full((N + 1, ), -5, dtype=torch.int32)
    rt.barrier()
    signal_each[(1, )](sig_t, torch.from_numpy(rng_of(rt.pe).permutation(N)), 3, right, ctx, N)
    drain[(1, )](sig_t, status, indices, calls, 3, ctx, N=N)
    counts = list(calls.numpy())
    k = counts.index(-1)
    assert all(c > 0 for c in counts[:k]) and sum(counts[:k]) == N, counts
    assert sorted(indices.numpy()[:N]) == list(range(N)), indices
    assert (status.numpy() == 1).all()
    rt.barrier()


def test_wait_until_some_skips_status_and_mask(rt, ctx):
    sig, sig_t = sym(rt, N, "uint64")
    sig_t[:] = torch.tensor([1, 0, 1, 1, 0, 1, 1, 1], dtype=torch.uint64)
    status = torch.tensor([1, 0, 0, 7, 0, 0, 0, 0], dtype=torch.int32)
    # Elements 0 and 3 are skipped by their status, 6 and 7 by the mask.
    assert call_some(rt, ctx, sig_t, status, 1, n=6) == (2, [2, 5])
    assert list(status.numpy()) == [1, 0, 1, 7, 0, 1, 0, 0]
    # Every candidate skipped: 0 at once, nothing written.
    assert call_some(rt, ctx, sig_t, torch.ones(N, dtype=torch.int32), 1) == (0, [])
    assert call_some(rt, ctx, sig_t, status, 1, n=0) == (0, [])
    # Other comparisons: the zeros equal 0.
    assert call_some(rt, ctx, sig_t, torch.zeros(N, dtype=torch.int32), 0, cmp=tx.EQ) == (2,
                                                                                         [1, 4])
    rt.barrier()


def call_test(rt, ctx, sig_t, status, value, n=N, any_=False):
    indices = torch.full((N, ), -1, dtype=torch.int64)
    count = torch.full((1, ), -5, dtype=torch.int32)
    sweep_signals[(1, )](sig_t, status, indices, count, value, ctx, n, N=N, CMP=tx.GE,
                            ANY=any_)
    c = int(count.item())
    if any_:
        assert (indices == -1).all()
        return c
    assert (indices.numpy()[c:] == -1).all(), "only indices[:count] are written"
    return c, list(indices.numpy()[:c])


def test_test_some_takes_what_arrived_without_waiting(rt, ctx):
    sig, sig_t = sym(rt, N, "uint64")
    status = torch.zeros(N, dtype=torch.int32)
    assert call_test(rt, ctx, sig_t, status, 1) == (0, [])  # nothing yet: 0, no wait
    sig_t[:] = torch.tensor([0, 1, 0, 2, 0, 0, 1, 1], dtype=torch.uint64)
    status[3] = 5
    assert call_test(rt, ctx, sig_t, status, 1, n=7) == (2, [1, 6])
    assert list(status.numpy()) == [0, 1, 0, 5, 0, 0, 1, 0]
    assert call_test(rt, ctx, sig_t, status, 1) == (1, [7])  # only the one not yet taken
    assert call_test(rt, ctx, sig_t, status, 1) == (0, [])
    rt.barrier()


def test_test_any_with_status_drains_one_at_a_time(rt, ctx):
    sig, sig_t = sym(rt, N, "uint64")
    sig_t[:] = torch.tensor([0, 4, 0, 4, 4, 0, 0, 4], dtype=torch.uint64)
    status = torch.zeros(N, dtype=torch.int32)
    status[4] = 1
    taken = [call_test(rt, ctx, sig_t, status, 4, n=6, any_=True) for _ in range(3)]
    assert taken == [1, 3, tx.NPOS.value]
    assert list(status.numpy()) == [0, 1, 0, 1, 1, 0, 0, 0]
    rt.barrier()
