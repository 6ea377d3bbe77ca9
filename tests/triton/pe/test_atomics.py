"""Every atomic against a NumPy reference: each PE applies the op to its right neighbour's
array; the returned previous values must be the neighbour's initial ones, and each PE's array
must end as op(its initial values, its left neighbour's operands). Masked-off elements stay."""

import numpy as np
import pytest
import torch

from conftest import neighbours, rng_of, sym
from tx_kernels import atomic

N = 16
N_ACTIVE = 13

REFERENCE = {
    "add": lambda a, v, c: a + v,
    "sub": lambda a, v, c: a - v,
    "xchg": lambda a, v, c: v,
    "and": lambda a, v, c: a & v,
    "or": lambda a, v, c: a | v,
    "xor": lambda a, v, c: a ^ v,
    "min": lambda a, v, c: np.minimum(a, v),
    "max": lambda a, v, c: np.maximum(a, v),
    "cas": lambda a, v, c: np.where(a == c, v, a),
}


def operands(pe, dtype):
    """(initial values, operands, cas comparands) of PE pe: half the comparands match."""
    g = rng_of(pe)
    if np.dtype(dtype).kind == "f":
        init = g.integers(-50, 50, N).astype(dtype)
        val = g.integers(-50, 50, N).astype(dtype)
    else:
        info = np.iinfo(dtype)
        lo, hi = max(info.min, -2**40), min(info.max, 2**40)
        init = g.integers(lo, hi, N, dtype=dtype)
        val = g.integers(lo, hi, N, dtype=dtype)
    cmp = np.where(np.arange(N) % 2 == 0, init, init + 1).astype(dtype)
    return init, val, cmp


def run_atomic(rt, ctx, op, dtype, sem="acq_rel", scalar=False):
    right, left = neighbours(rt)
    init, val, cmp = operands(rt.pe, dtype)
    a, a_t = sym(rt, N, dtype)
    a_t[:] = torch.from_numpy(init)
    old = torch.from_numpy(np.full(N, 99, dtype))
    rt.barrier()
    atomic[(1, )](a_t, torch.from_numpy(val), torch.from_numpy(cmp), old, right, ctx, N_ACTIVE,
                  N=N, OP=op, SEM=sem, SCALAR=scalar)
    rt.barrier()
    r_init, _, _ = operands(right, dtype)
    l_init, l_val, l_cmp = operands(left, dtype)
    n = 1 if scalar else (N if op == "cas" else N_ACTIVE)
    with np.errstate(over="ignore"):
        want = init.copy()
        want[:n] = REFERENCE[op](init, l_val, l_cmp)[:n]
    assert np.array_equal(old.numpy()[:n], r_init[:n]), (op, old.numpy(), r_init)
    assert np.array_equal(old.numpy()[n:], np.full(N - n, 99, dtype)), "masked elements untouched"
    assert np.array_equal(a_t.numpy(), want), (op, a_t.numpy(), want)
    rt.barrier()


@pytest.mark.parametrize("op", list(REFERENCE))
@pytest.mark.parametrize("dtype", ["int32", "uint64"])
def test_atomic_returns_previous_values_and_applies_op(rt, ctx, op, dtype):
    run_atomic(rt, ctx, op, dtype)


@pytest.mark.parametrize("op", ["add", "min", "max", "xchg"])
def test_atomic_on_int64_and_uint32(rt, ctx, op):
    run_atomic(rt, ctx, op, "int64")
    run_atomic(rt, ctx, op, "uint32")


@pytest.mark.parametrize("sem", ["relaxed", "acquire", "release", "acq_rel"])
def test_atomic_add_with_every_sem(rt, ctx, sem):
    run_atomic(rt, ctx, "add", "int32", sem=sem)


@pytest.mark.parametrize("op", ["add", "cas", "xchg"])
def test_atomic_through_a_scalar_pointer(rt, ctx, op):
    run_atomic(rt, ctx, op, "int64", scalar=True)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("op", ["add", "cas"])
def test_atomic_on_floats(rt, ctx, op, dtype):
    """(Triton's interpreter has no float atomic_xchg.)"""
    right, left = neighbours(rt)
    if rt.transport(right) == "proxy":
        pytest.skip("the proxy carries integer atomics only (as C++ AtomicWord)")
    run_atomic(rt, ctx, op, dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("sem", ["relaxed", "acq_rel"])
def test_float_atomic_add_from_every_mapped_pe_loses_no_update(rt, ctx, dtype, sem):
    """Every PE adds (its PE + 1) / 4, 20 times, to every element of every PE mapped here, all at
    once: each element ends as the exact sum (quarters add exactly in both widths)."""
    a, a_t = sym(rt, N, dtype)
    peers = [pe for pe in range(rt.n_pes) if rt.transport(pe) != "proxy"]
    rounds = 20
    val = torch.from_numpy(np.full(N, (rt.pe + 1) / 4, dtype))
    old = torch.zeros(N, dtype=a_t.dtype)
    rt.barrier()
    for _ in range(rounds):
        for pe in peers:
            atomic[(1, )](a_t, val, val, old, pe, ctx, N, N=N, OP="add", SEM=sem, SCALAR=False)
    rt.barrier()
    # The PEs mapped here are this PE's node, and they all map each other.
    want = rounds * sum((pe + 1) / 4 for pe in peers)
    assert (a_t.numpy() == want).all(), (a_t, want)
    rt.barrier()
