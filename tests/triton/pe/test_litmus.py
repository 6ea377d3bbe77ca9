"""The message-passing litmus: a producer PE hands a multi-row tile to a consumer PE 1,000
times through put_signal; after acquiring the round's signal the consumer must see the whole
tile of that round (zero violations). PEs pair up: 0 -> 1, 2 -> 3, ...

The mutation "put_signal without its release" (in sync.put_signal: the signal's
sem="release" made "relaxed" and the program barrier before it removed) was run by hand on
2026-12-01: test_message_passing_1000_rounds_without_a_violation, -np 2, interpreter: passed,
0 violations. That is expected and proves nothing either way: the interpreter executes each
PE's stores in program order on x86 (TSO), so a missing release cannot show here. Where it
matters (GPUs) the compile checks in tests/triton catch it: they require the signal to be a
system-scope release instruction in the PTX / AMDGCN and reject a weakened variant.
What the interpreter can show is the consequence the release prevents, a consumer that sees
the signal before the tile: test_signal_before_tile_is_caught forces that order (the mutant
signals first and writes the tile only after the consumer read the round) and the litmus must
count every round as a violation."""

import numpy as np
import pytest
import torch

from conftest import mapped, sym
from tx_kernels import message_passing

R, C = 4, 8


def run_litmus(rt, ctx, rounds, signal_first):
    if rt.n_pes % 2 != 0:
        pytest.skip("the litmus pairs PEs: needs an even number of PEs")
    producer = rt.pe % 2 == 0
    peer = rt.pe + 1 if producer else rt.pe - 1
    inbox, inbox_t = sym(rt, (R, C), "int32")
    staging, staging_t = sym(rt, (R, C), "int32")
    arrived, arrived_t = sym(rt, 1, "uint64")
    acked, acked_t = sym(rt, 1, "uint64")
    bad = torch.full((1, ), -1, dtype=torch.int32)
    rt.barrier()
    message_passing[(1, )](inbox_t, staging_t, arrived_t, acked_t, bad, rounds, peer, ctx, R=R,
                           C=C, PRODUCER=producer, SIGNAL_FIRST=signal_first)
    rt.barrier()
    if producer:
        assert acked_t.item() == rounds
        return None
    assert arrived_t.item() == rounds
    # The last round's tile arrived in the end, in both variants.
    assert np.array_equal(inbox_t.numpy(), rounds * 4096 + np.arange(R * C).reshape(R, C))
    return bad.item()


def test_message_passing_1000_rounds_without_a_violation(rt, ctx):
    """(200 rounds where the pair is on two nodes: each round is then two trips through the
    proxy ring, tens of ms under the interpreter.)"""
    peer = rt.pe + 1 if rt.pe % 2 == 0 else rt.pe - 1
    rounds = 1000 if rt.n_pes % 2 != 0 or mapped(rt, peer) else 200
    violations = run_litmus(rt, ctx, rounds, False)
    assert violations in (None, 0)


def test_signal_before_tile_is_caught(rt, ctx):
    rounds = 40
    violations = run_litmus(rt, ctx, rounds, True)
    assert violations in (None, rounds)
