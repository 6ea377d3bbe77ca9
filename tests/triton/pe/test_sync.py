"""signal, wait_until, put_signal and barrier: every comparison and signal op, the barrier
repeated, and both directions between Triton and the C++ device API (rt.signal and
rt.wait_until run C++ device kernels; rt.device_barrier is the C++ device barrier)."""

import numpy as np
import pytest
import torch

import tessera.triton as tx
from conftest import neighbours, sym
from tx_kernels import (barrier_once, barrier_rounds, put_signal_tile, signal_wait,
                        wait_then_read)

U64 = 2**64

# cmp, target, a value for which the comparison fails, one for which it holds.
COMPARISONS = [
    (tx.EQ, 7, 3, 7),
    (tx.NE, 7, 7, 8),
    (tx.GT, 7, 7, 9),
    (tx.GE, 7, 6, 7),
    (tx.LT, 7, 7, 6),
    (tx.LE, 7, 8, 7),
]
CMP_NAMES = {int(tx.EQ): "eq", int(tx.NE): "ne", int(tx.GT): "gt", int(tx.GE): "ge",
             int(tx.LT): "lt", int(tx.LE): "le"}


@pytest.mark.parametrize("op", [tx.SET, tx.ADD], ids=["set", "add"])
@pytest.mark.parametrize("cmp,target,fails,holds", COMPARISONS,
                         ids=[CMP_NAMES[int(c[0])] for c in COMPARISONS])
def test_wait_until_returns_the_first_value_that_satisfies_cmp(rt, ctx, op, cmp, target, fails,
                                                                holds):
    """Each PE's signal holds `fails` until its left neighbour's signal moves it to `holds`
    (set, or add of the difference modulo 2^64): the wait must not return before, and returns
    the value it saw."""
    right, left = neighbours(rt)
    sig, sig_t = sym(rt, 1, "uint64", fails)
    seen = torch.zeros(1, dtype=torch.uint64)
    value = holds if op == tx.SET else (holds - fails) % U64
    rt.barrier()
    signal_wait[(1, )](sig_t, value, right, sig_t, target, seen, ctx, OP=op, CMP=cmp,
                       SIGNAL=True, WAIT=True)
    assert seen.item() == holds
    assert sig_t.item() == holds
    rt.barrier()


def test_wait_until_that_holds_at_once_returns_the_value(rt, ctx):
    sig, sig_t = sym(rt, 1, "uint64", 12)
    seen = torch.zeros(1, dtype=torch.uint64)
    signal_wait[(1, )](sig_t, 0, rt.pe, sig_t, 12, seen, ctx, OP=tx.SET, CMP=tx.EQ,
                       SIGNAL=False, WAIT=True)
    assert seen.item() == 12
    rt.barrier()


def test_signals_from_every_pe_add_up(rt, ctx):
    """Every PE adds pe + 1 to every PE's signal; each then waits for the total."""
    sig, sig_t = sym(rt, 1, "uint64")
    seen = torch.zeros(1, dtype=torch.uint64)
    total = rt.n_pes * (rt.n_pes + 1) // 2
    for pe in range(rt.n_pes):
        signal_wait[(1, )](sig_t, rt.pe + 1, pe, sig_t, 0, seen, ctx, OP=tx.ADD, CMP=tx.EQ,
                           SIGNAL=True, WAIT=False)
    signal_wait[(1, )](sig_t, 0, 0, sig_t, total, seen, ctx, OP=tx.ADD, CMP=tx.EQ,
                       SIGNAL=False, WAIT=True)
    assert seen.item() == total
    rt.barrier()


@pytest.mark.parametrize("rows", [4, 3])
def test_put_signal_tile_is_complete_when_the_signal_is_seen(rt, ctx, rows):
    right, left = neighbours(rt)
    R, C = 4, 8
    dst, dst_t = sym(rt, (R, C), "float32", -1.0)
    src, src_t = sym(rt, (R, C), "float32")
    src_t[:] = torch.arange(R * C, dtype=torch.float32).reshape(R, C) + 100 * rt.pe
    sig, sig_t = sym(rt, 1, "uint64")
    rt.barrier()
    put_signal_tile[(1, )](dst_t, src_t, sig_t, 5, right, ctx, rows, R=R, C=C, OP=tx.SET)
    out = torch.zeros(R * C, dtype=torch.float32)
    wait_then_read[(1, )](sig_t, 5, dst_t, out, ctx, N=R * C)
    want = np.full((R, C), -1.0, np.float32)
    want[:rows] = np.arange(R * C, dtype=np.float32).reshape(R, C)[:rows] + 100 * left
    assert np.array_equal(out.numpy().reshape(R, C), want)
    rt.barrier()


def test_barrier_repeated_100_times_orders_every_round(rt, ctx):
    slots, slots_t = sym(rt, 2 * rt.n_pes, "uint64")
    bad = torch.full((1, ), -1, dtype=torch.int64)
    rt.barrier()
    barrier_rounds[(1, )](slots_t, bad, 100, ctx)
    assert bad.item() == 0
    # Round i wrote i + 1 into the slots of parity i % 2: the last two rounds, 98 and 99.
    assert (slots_t[:rt.n_pes] == 99).all() and (slots_t[rt.n_pes:] == 100).all()
    rt.barrier()


def test_triton_barrier_and_cpp_device_barrier_interleave(rt, ctx):
    """They count on the same control words: a round ordered by either barrier sees every PE's
    write (rt.put, complete on return), and neither ends early or waits for the other's count."""
    slots, slots_t = sym(rt, 2 * rt.n_pes, "int64")
    for i in range(12):
        half = (i % 2) * rt.n_pes
        for pe in range(rt.n_pes):
            rt.put(slots_view(slots, half + rt.pe), np.array([i + 1], np.int64), pe)
        if i % 3 == 2:
            rt.device_barrier()
        else:
            barrier_once[(1, )](ctx)
        assert np.array_equal(slots_t.numpy()[half:half + rt.n_pes], np.full(rt.n_pes, i + 1)), i
    rt.barrier()


def slots_view(slots, i):
    """Element i of a symmetric int64 array, as a one-element symmetric destination for rt.put."""
    return torch.from_dlpack(slots)[i:i + 1]


def test_triton_put_signal_received_by_a_cpp_device_wait(rt, ctx):
    right, left = neighbours(rt)
    R, C = 4, 8
    dst, dst_t = sym(rt, (R, C), "float32")
    src, src_t = sym(rt, (R, C), "float32")
    src_t[:] = torch.arange(R * C, dtype=torch.float32).reshape(R, C) * (rt.pe + 1)
    sig, sig_t = sym(rt, 1, "uint64")
    rt.barrier()
    put_signal_tile[(1, )](dst_t, src_t, sig_t, 3, right, ctx, R, R=R, C=C, OP=tx.ADD)
    rt.wait_until(sig, "==", 3)
    want = np.arange(R * C, dtype=np.float32).reshape(R, C) * (left + 1)
    assert np.array_equal(dst_t.numpy(), want)
    rt.barrier()


def test_cpp_signal_received_by_a_triton_wait(rt, ctx):
    right, left = neighbours(rt)
    N = 16
    data, data_t = sym(rt, N, "int32")
    sig, sig_t = sym(rt, 1, "uint64")
    rt.barrier()
    rt.put(data, np.arange(N, dtype=np.int32) + 1000 * rt.pe, right)
    rt.signal(sig, 9, right, op="set")
    out = torch.zeros(N, dtype=torch.int32)
    wait_then_read[(1, )](sig_t, 9, data_t, out, ctx, N=N)
    assert np.array_equal(out.numpy(), np.arange(N) + 1000 * left)
    rt.barrier()
