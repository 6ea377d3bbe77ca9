"""Triton producer -> C++ proxy: tessera.triton._proxy's descriptors served by the proxy thread of
the real runtime, across two pretend nodes (tessera-run -np 2 --node-ids a,b), so the peer's heap
is not mapped and every call goes through the ring. Each PE sends to the other and checks what
the other sent it; the data paths (put, get, put_signal, signal, atomics with their returned
values, fence, quiet) are checked by value.

Collective: both PEs run the same tests in the same order. Skipped where the peer is mapped (a
single node)."""

import ctypes
import os
import threading
import time

import numpy as np
import pytest
import torch
import triton
import triton.language as tl

from tessera.triton import _proxy as px

ROWS, COLS = 4, 8


@pytest.fixture(scope="module")
def peer(rt, ctx):
    if rt.n_pes != 2:
        pytest.skip("pairs PE 0 with PE 1: run with -np 2 --node-ids a,b")
    other = 1 - rt.pe
    if int(ctx[16 + other]) != 0 or int(ctx[7]) == 0:
        pytest.skip("the peer's heap is mapped here: run on two (pretend) nodes")
    return other


def view(array):
    return torch.from_dlpack(array)


def await_host(predicate, what, timeout_s=20.0):
    """Waits until predicate() holds on this PE's memory, bounded."""
    deadline = time.monotonic() + timeout_s
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        os.sched_yield()  # the proxy thread writes concurrently


def tile_values(pe, stride=COLS):
    """What PE `pe` sends: a distinct float per element of a ROWS x stride block."""
    return (pe + 1) * 1000 + np.arange(ROWS * stride, dtype=np.float32)


@triton.jit
def _put_get(ctx, remote, local, peer, out, STRIDE: tl.constexpr, GET: tl.constexpr,
             WAIT: tl.constexpr, R: tl.constexpr, C: tl.constexpr):
    r = tl.arange(0, R)[:, None]
    c = tl.arange(0, C)[None, :]
    if GET:
        ok = px.proxy_get(local + r * C + c, remote + r * STRIDE + c, peer, ctx, WAIT=WAIT)
    else:
        ok = px.proxy_put(remote + r * STRIDE + c, local + r * C + c, peer, ctx, WAIT=WAIT)
    if not WAIT:
        ok = ok & px.proxy_quiet(ctx)
    tl.store(out, ok)


@pytest.mark.parametrize("stride,wait", [(COLS, True), (2 * COLS, True), (COLS, False)],
                         ids=["contiguous", "strided", "nbi+quiet"])
def test_put_tile_lands_on_the_other_node(rt, ctx, peer, stride, wait):
    dst = rt.zeros((ROWS * stride, ), dtype="float32")
    src = rt.zeros((ROWS * COLS, ), dtype="float32")
    view(src)[:] = torch.from_numpy(tile_values(rt.pe))
    rt.barrier()
    ok = torch.zeros(1, dtype=torch.int32)
    _put_get[(1, )](ctx, view(dst), view(src), peer, ok, STRIDE=stride, GET=False, WAIT=wait,
                    R=ROWS, C=COLS)
    assert ok.item() == 1
    rt.barrier()
    got = view(dst).numpy().reshape(ROWS, stride)
    np.testing.assert_array_equal(got[:, :COLS], tile_values(peer).reshape(ROWS, COLS))
    np.testing.assert_array_equal(got[:, COLS:], 0)  # a strided put leaves the gaps alone
    rt.barrier()


@pytest.mark.parametrize("stride", [COLS, 2 * COLS], ids=["contiguous", "strided"])
def test_get_tile_reads_the_other_node(rt, ctx, peer, stride):
    src = rt.zeros((ROWS * stride, ), dtype="float32")
    dst = rt.zeros((ROWS * COLS, ), dtype="float32")
    view(src)[:] = torch.from_numpy(tile_values(rt.pe, stride))
    rt.barrier()
    ok = torch.zeros(1, dtype=torch.int32)
    _put_get[(1, )](ctx, view(src), view(dst), peer, ok, STRIDE=stride, GET=True, WAIT=True,
                    R=ROWS, C=COLS)
    assert ok.item() == 1
    want = tile_values(peer, stride).reshape(ROWS, stride)[:, :COLS]
    np.testing.assert_array_equal(view(dst).numpy().reshape(ROWS, COLS), want)
    rt.barrier()


@triton.jit
def _put_signal(ctx, dst, src, sig, peer, value, out, STRIDE: tl.constexpr, SIG_OP: tl.constexpr,
                R: tl.constexpr, C: tl.constexpr):
    r = tl.arange(0, R)[:, None]
    c = tl.arange(0, C)[None, :]
    tl.store(out, px.proxy_put_signal(dst + r * STRIDE + c, src + r * C + c, sig, value, SIG_OP,
                                      peer, ctx))


@pytest.mark.parametrize("stride", [COLS, 2 * COLS], ids=["one-descriptor", "rows+signal"])
def test_put_signal_delivers_the_tile_before_the_signal(rt, ctx, peer, stride):
    dst = rt.zeros((ROWS * stride, ), dtype="float32")
    src = rt.zeros((ROWS * COLS, ), dtype="float32")
    sig = rt.zeros((1, ), dtype="uint64")
    view(src)[:] = torch.from_numpy(tile_values(rt.pe))
    rt.barrier()
    ok = torch.zeros(1, dtype=torch.int32)
    for _ in range(2):  # add 3, twice
        _put_signal[(1, )](ctx, view(dst), view(src), view(sig), peer, 3, ok, STRIDE=stride,
                           SIG_OP=1, R=ROWS, C=COLS)
        assert ok.item() == 1
    mine = view(sig)
    await_host(lambda: int(mine[0]) >= 3, "the first put_signal's signal")
    got = view(dst).numpy().reshape(ROWS, stride)[:, :COLS]
    np.testing.assert_array_equal(got, tile_values(peer).reshape(ROWS, COLS))
    await_host(lambda: int(mine[0]) == 6, "the second put_signal's signal")
    rt.barrier()


@triton.jit
def _signal(ctx, sig, peer, value, out, SIG_OP: tl.constexpr, FENCED: tl.constexpr):
    ok = px.proxy_signal(sig, value, SIG_OP, peer, ctx, FENCED=FENCED)
    tl.store(out, ok & px.proxy_quiet(ctx))


@pytest.mark.parametrize("sig_op,fenced", [(0, True), (1, True), (1, False)],
                         ids=["set", "add", "add-relaxed"])
def test_signal_updates_the_word_on_the_other_node(rt, ctx, peer, sig_op, fenced):
    sig = rt.zeros((1, ), dtype="uint64")
    view(sig)[:] = 10
    rt.barrier()
    ok = torch.zeros(1, dtype=torch.int32)
    value = 2**40 + 7
    _signal[(1, )](ctx, view(sig), peer, value, ok, SIG_OP=sig_op, FENCED=fenced)
    assert ok.item() == 1
    rt.barrier()  # the sender's quiet returned: the update is done
    assert int(view(sig)[0]) == (value if sig_op == 0 else 10 + value)
    rt.barrier()


@triton.jit
def _fenced_nbi_then_signal(ctx, dst, src, sig, peer, out, R: tl.constexpr, C: tl.constexpr):
    i = tl.arange(0, R * C)
    ok = px.proxy_put(dst + i, src + i, peer, ctx, WAIT=False)
    ok = ok & px.proxy_fence(ctx)
    ok = ok & px.proxy_signal(sig, 1, 0, peer, ctx, FENCED=False)
    tl.store(out, ok & px.proxy_quiet(ctx))


def test_fence_orders_an_nbi_put_before_a_relaxed_signal(rt, ctx, peer):
    dst = rt.zeros((ROWS * COLS, ), dtype="float32")
    src = rt.zeros((ROWS * COLS, ), dtype="float32")
    sig = rt.zeros((1, ), dtype="uint64")
    view(src)[:] = torch.from_numpy(tile_values(rt.pe))
    rt.barrier()
    ok = torch.zeros(1, dtype=torch.int32)
    _fenced_nbi_then_signal[(1, )](ctx, view(dst), view(src), view(sig), peer, ok, R=ROWS, C=COLS)
    assert ok.item() == 1
    await_host(lambda: int(view(sig)[0]) == 1, "the fenced signal")
    np.testing.assert_array_equal(view(dst).numpy(), tile_values(peer))
    rt.barrier()


@triton.jit
def _atomic(ctx, ptr, val, cmp, out, peer, N: tl.constexpr, AMO: tl.constexpr,
            FETCH: tl.constexpr):
    i = tl.arange(0, N)
    old = px.proxy_atomic(ptr + i, tl.load(val + i), tl.load(cmp + i), peer, ctx, AMO=AMO,
                          FETCH=FETCH)
    px.proxy_quiet(ctx)
    tl.store(out + i, old)


def _initial(pe, dtype):
    return np.array([5, -9, 1 << 20, 12 + pe], dtype=np.int64).astype(dtype)


_OPERAND = np.array([3, 6, -1, 12], dtype=np.int64)
_COMPARE = np.array([5, 0, 1 << 20, 7], dtype=np.int64)  # CAS: elements 0 and 2 match
_REFERENCE = {
    "add": (px.AMO_ADD, lambda a, v, c: a + v),
    "and": (px.AMO_AND, lambda a, v, c: a & v),
    "or": (px.AMO_OR, lambda a, v, c: a | v),
    "xor": (px.AMO_XOR, lambda a, v, c: a ^ v),
    "min": (px.AMO_MIN, lambda a, v, c: np.minimum(a, v)),
    "max": (px.AMO_MAX, lambda a, v, c: np.maximum(a, v)),
    "xchg": (px.AMO_XCHG, lambda a, v, c: v),
    "cas": (px.AMO_CAS, lambda a, v, c: np.where(a == c, v, a)),
}


@pytest.mark.parametrize("dtype", ["int32", "int64", "uint32", "uint64"])
@pytest.mark.parametrize("name", list(_REFERENCE))
def test_fetching_atomic_returns_the_old_values(rt, ctx, peer, name, dtype):
    amo, apply = _REFERENCE[name]
    words = rt.zeros((4, ), dtype=dtype)
    np.from_dlpack(words)[:] = _initial(rt.pe, dtype)
    val = torch.from_numpy(_OPERAND.astype(dtype))
    cmp = torch.from_numpy(_COMPARE.astype(dtype))
    out = torch.zeros(4, dtype=getattr(torch, dtype))
    rt.barrier()
    _atomic[(1, )](ctx, view(words), val, cmp, out, peer, N=4, AMO=amo.value, FETCH=True)
    np.testing.assert_array_equal(out.numpy(), _initial(peer, dtype))
    rt.barrier()
    want = apply(_initial(rt.pe, dtype), _OPERAND.astype(dtype), _COMPARE.astype(dtype))
    np.testing.assert_array_equal(np.from_dlpack(words), want.astype(dtype))
    rt.barrier()


def test_unfetched_atomic_is_done_at_quiet(rt, ctx, peer):
    words = rt.zeros((4, ), dtype="int64")
    np.from_dlpack(words)[:] = _initial(rt.pe, "int64")
    val = torch.from_numpy(_OPERAND)
    out = torch.full((4, ), -1, dtype=torch.int64)
    rt.barrier()
    _atomic[(1, )](ctx, view(words), val, val, out, peer, N=4, AMO=px.AMO_ADD.value, FETCH=False)
    assert out.tolist() == [0, 0, 0, 0]
    rt.barrier()
    np.testing.assert_array_equal(np.from_dlpack(words), _initial(rt.pe, "int64") + _OPERAND)
    rt.barrier()


@triton.jit
def _counter(ctx, word, out, peer, ROUNDS: tl.constexpr):
    for _ in range(ROUNDS):
        px.proxy_atomic(word, 1, 0, peer, ctx, AMO=px.AMO_ADD, FETCH=False, FENCED=False)
    tl.store(out, px.proxy_atomic(word, 0, 0, peer, ctx, AMO=px.AMO_ADD))


def test_many_descriptors_pass_through_the_ring(rt, ctx, peer):
    # More descriptors than the ring holds slots would need laps; the fetch at the end starts
    # after every earlier one (a fetching atomic waits for earlier descriptors) and sees them all.
    word = rt.zeros((1, ), dtype="uint64")
    out = torch.zeros(1, dtype=torch.uint64)
    rt.barrier()
    rounds = 200
    _counter[(1, )](ctx, view(word), out, peer, ROUNDS=rounds)
    assert int(out[0]) == rounds
    rt.barrier()
    assert int(view(word)[0]) == rounds + 0
    rt.barrier()


@triton.jit
def _signal_adds(ctx, sig, peer, out, ROUNDS: tl.constexpr):
    ok = tl.cast(1, tl.int32)
    for _ in range(ROUNDS):
        ok = ok & px.proxy_signal(sig, 1, 1, peer, ctx, FENCED=False)
    tl.store(out, ok & px.proxy_quiet(ctx))


def test_triton_and_host_producers_share_the_ring(rt, ctx, peer):
    # One protocol, two producers at once: a host thread's rt.signal (the C++ host producer) and
    # a Triton kernel push into the same ring; every ticket is served exactly once.
    rounds = 40
    sig = rt.zeros((1, ), dtype="uint64")
    reserve = ctypes.c_uint64.from_address(int(ctx[7]))  # the ring's ticket counter
    tickets = reserve.value
    rt.barrier()
    host = threading.Thread(target=lambda: [rt.signal(sig, 1, peer, op="add")
                                            for _ in range(rounds)])
    host.start()
    ok = torch.zeros(1, dtype=torch.int32)
    _signal_adds[(1, )](ctx, view(sig), peer, ok, ROUNDS=rounds)
    host.join(timeout=60)
    assert not host.is_alive() and ok.item() == 1
    assert reserve.value - tickets >= 2 * rounds  # the host's descriptors went into this ring too
    rt.barrier()
    assert int(view(sig)[0]) == 2 * rounds
    rt.barrier()
