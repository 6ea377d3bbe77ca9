"""Argument checks (always on: PE range, mapped peer; checked mode, TESSERA_CHECK=1 or
init(checked=True): heap bounds). A failed check records the failure and suppresses the access;
tessera.triton.check(rt) then raises what the C++ device API raises for the same mistake, with
the same message: compared with rt.signal / rt.wait_until, which run C++ device kernels, where
they can make the mistake, else with the C++ format (impl/check.hpp)."""

import numpy as np
import pytest
import torch
import triton
import triton.language as tl

import tessera
import tessera.triton as tx
from conftest import mapped, neighbours, sym
from tx_kernels import (atomic, load_store, one_element, signal_tests, signal_wait,
                        tile_copy, wait_some)


@pytest.fixture(scope="module")
def rt():
    runtime = tessera.init(heap_size="32M", checked=True)
    yield runtime
    runtime.finalize()


def raised(call):
    with pytest.raises(tessera.Error) as info:
        call()
    return info.value


@triton.jit
def shifted_get(dst, src, shift, pe, ctx, N: tl.constexpr):
    """get of N elements at src + shift on pe into dst."""
    offs = tl.arange(0, N)
    tx.get(dst + offs, src + shift + offs, pe, ctx)


@triton.jit
def two_mistakes(ptr, ctx):
    tx.load(ptr, -1, ctx)
    tx.store(ptr, 1, -2, ctx)


def test_context_says_checked_mode(rt, ctx):
    assert ctx[tessera.TRITON_CONTEXT_WORDS["flags"]].item() & 1 == 1


def test_wait_on_a_signal_outside_the_heap_reads_as_the_cpp_wait(rt, ctx):
    sig = torch.zeros(1, dtype=torch.uint64)  # process memory, not the heap
    cpp = raised(lambda: rt.wait_until(sig, ">=", 1))
    seen = torch.full((1, ), 5, dtype=torch.uint64)
    signal_wait[(1, )](sig, 0, 0, sig, 1, seen, ctx, OP=tx.SET, CMP=tx.GE, SIGNAL=False,
                       WAIT=True)
    assert seen.item() == 0, "the wait did not read the word"
    mine = raised(lambda: tx.check(rt))
    assert type(mine) is type(cpp) is tessera.InvalidArgumentError
    assert str(mine) == str(cpp)
    assert f"signal [address {sig.data_ptr():#x} (outside the heap), +8 bytes)" in str(mine)
    rt.barrier()


def test_signal_to_a_pe_outside_the_job_reads_as_the_cpp_signal(rt, ctx):
    sig, sig_t = sym(rt, 1, "uint64")
    bad_pe = rt.n_pes + 3
    cpp = raised(lambda: rt.signal(sig, 1, bad_pe))
    signal_wait[(1, )](sig_t, 1, bad_pe, sig_t, 0, sig_t, ctx, OP=tx.SET, CMP=tx.GE,
                       SIGNAL=True, WAIT=False)
    mine = raised(lambda: tx.check(rt))
    assert type(mine) is type(cpp) is tessera.InvalidArgumentError
    assert str(mine) == str(cpp)
    assert str(mine) == (f"tessera [PE {rt.pe}] InvalidArgument: signal on PE {rt.pe}: target "
                         f"PE {bad_pe} is outside [0, {rt.n_pes})")
    rt.barrier()
    assert sig_t.item() == 0


def test_put_to_a_destination_outside_the_heap_is_suppressed(rt, ctx):
    right, left = neighbours(rt)
    dst = torch.full((4, 8), -1.0)
    src, src_t = sym(rt, (4, 8), "float32", 2.0)
    tile_copy[(1, )](dst, src_t, right, ctx, 4, 8, 8, 8, R=4, C=8, GET=False)
    e = raised(lambda: tx.check(rt))
    assert isinstance(e, tessera.InvalidArgumentError)
    assert e.message == (f"put on PE {rt.pe}: destination tile [address {dst.data_ptr():#x} "
                         f"(outside the heap), +128 bytes) is not inside the symmetric heap of "
                         f"{rt.heap_size} bytes")
    assert (dst == -1.0).all()
    rt.barrier()


def test_get_of_a_tile_running_past_the_heap_end_is_suppressed(rt, ctx):
    right, left = neighbours(rt)
    a, a_t = sym(rt, 8, "int32")
    out, out_t = sym(rt, 8, "int32", -1)
    # 8 elements from 16 bytes before the end of the heap.
    shift = (rt.heap_size - 16 - a.offset) // 4
    shifted_get[(1, )](out_t, a_t, shift, right, ctx, N=8)
    e = raised(lambda: tx.check(rt))
    assert isinstance(e, tessera.InvalidArgumentError)
    assert e.message == (f"get on PE {rt.pe}: source tile [heap offset {rt.heap_size - 16}, "
                         f"+32 bytes) is not inside the symmetric heap of {rt.heap_size} bytes")
    assert (out_t == -1).all()
    rt.barrier()


def test_atomic_on_a_pointer_outside_the_heap_is_suppressed(rt, ctx):
    right, left = neighbours(rt)
    words = torch.full((16, ), 7, dtype=torch.int32)
    val = torch.ones(16, dtype=torch.int32)
    old = torch.zeros(16, dtype=torch.int32)
    atomic[(1, )](words, val, val, old, right, ctx, 16, N=16, OP="add", SEM="acq_rel",
                  SCALAR=False)
    e = raised(lambda: tx.check(rt))
    assert e.message == (f"atomic_add on PE {rt.pe}: pointer [address {words.data_ptr():#x} "
                         f"(outside the heap), +64 bytes) is not inside the symmetric heap of "
                         f"{rt.heap_size} bytes")
    assert (words == 7).all()
    rt.barrier()


def test_load_from_a_pe_outside_the_job_reads_other(rt, ctx):
    a, a_t = sym(rt, 16, "int32", 3)
    out = torch.zeros(16, dtype=torch.int32)
    load_store[(1, )](a_t, out, -1, ctx, 16, N=16, STORE=False)
    e = raised(lambda: tx.check(rt))
    assert isinstance(e, tessera.InvalidArgumentError)
    assert e.message == f"load on PE {rt.pe}: target PE -1 is outside [0, {rt.n_pes})"
    assert (out == -1).all()
    rt.barrier()


def test_only_the_first_failure_is_reported_and_check_clears_it(rt, ctx):
    a, a_t = sym(rt, 1, "int32")
    two_mistakes[(1, )](a_t, ctx)
    e = raised(lambda: tx.check(rt))
    assert e.message == f"load on PE {rt.pe}: target PE -1 is outside [0, {rt.n_pes})"
    tx.check(rt)  # cleared: nothing more
    rt.barrier()


def test_load_from_a_peer_on_another_node_is_a_transport_error(rt, ctx):
    right, left = neighbours(rt)
    if mapped(rt, right):
        pytest.skip("every peer is mapped here (one node)")
    a, a_t = sym(rt, 16, "int32")
    out = torch.zeros(16, dtype=torch.int32)
    load_store[(1, )](a_t, out, right, ctx, 16, N=16, STORE=False)
    e = raised(lambda: tx.check(rt))
    assert isinstance(e, tessera.TransportError)
    assert e.message.startswith(f"load on PE {rt.pe}: PE {right}'s heap is not mapped here")
    rt.barrier()


def test_accesses_inside_the_heap_pass_the_checks(rt, ctx):
    right, left = neighbours(rt)
    dst, dst_t = sym(rt, (4, 8), "float32")
    src, src_t = sym(rt, (4, 8), "float32", rt.pe + 0.5)
    rt.barrier()
    tile_copy[(1, )](dst_t, src_t, right, ctx, 4, 8, 8, 8, R=4, C=8, GET=False)
    rt.barrier()
    assert (dst_t == left + 0.5).all()
    rt.barrier()


def cpp_wait_outside_the_heap(rt, sig):
    """The C++ checked-mode message of a wait on `sig` (outside the heap), without its call."""
    cpp = raised(lambda: rt.wait_until(sig, ">=", 1))
    assert cpp.message.startswith(f"wait_until on PE {rt.pe}: signal [")
    return cpp.message[len("wait_until"):]


def test_tests_of_signals_outside_the_heap_read_as_the_cpp_wait(rt, ctx):
    """test, test_all and test_any each name themselves and the whole block's span ("signals",
    as the C++ calls on arrays say); the first of them is the one recorded."""
    sigs = torch.ones(8, dtype=torch.uint64)  # process memory, not the heap
    tail = cpp_wait_outside_the_heap(rt, sigs[:1])
    out = torch.full((11, ), -5, dtype=torch.int64)
    signal_tests[(1, )](sigs, 1, out, ctx, 8, N=8, CMP=tx.EQ)
    e = raised(lambda: tx.check(rt))
    assert isinstance(e, tessera.InvalidArgumentError)
    block = tail.replace("signal [", "signals [").replace("+8 bytes", "+64 bytes")
    assert e.message == "test" + block, (e.message, tail)
    # Nothing was read: every test says false, test_any NPOS.
    assert list(out.numpy()) == [0] * 8 + [0, 0, -1]
    for n, name in [(1, "test_all"), (2, "test_any")]:
        one = torch.full((11, ), -5, dtype=torch.int64)
        check_only[(1, )](sigs, one, ctx, n)
        e = raised(lambda: tx.check(rt))
        assert e.message == name + block, (e.message, tail)
    rt.barrier()


@triton.jit
def check_only(sigs, out, ctx, WHICH: tl.constexpr):
    offs = tl.arange(0, 8)
    if WHICH == 1:
        tl.store(out, tx.test_all(sigs + offs, tx.EQ, 1, ctx).to(tl.int64))
    else:
        tl.store(out, tx.test_any(sigs + offs, tx.EQ, 1, ctx).to(tl.int64))


def test_wait_until_some_on_signals_outside_the_heap_returns_0_at_once(rt, ctx):
    sigs = torch.ones(8, dtype=torch.uint64)
    tail = cpp_wait_outside_the_heap(rt, sigs[:1])
    status = torch.zeros(8, dtype=torch.int32)
    indices = torch.full((8, ), -1, dtype=torch.int64)
    count = torch.full((1, ), -5, dtype=torch.int32)
    wait_some[(1, )](sigs, status, indices, count, 1, ctx, 8, N=8, CMP=tx.GE)
    e = raised(lambda: tx.check(rt))
    assert e.message == "wait_until_some" + tail.replace("signal [", "signals [").replace(
        "+8 bytes", "+64 bytes")
    assert count.item() == 0 and (status == 0).all() and (indices == -1).all()
    rt.barrier()


@pytest.mark.parametrize("get", [False, True], ids=["p", "g"])
def test_p_and_g_outside_the_heap_are_suppressed(rt, ctx, get):
    right, left = neighbours(rt)
    words = torch.full((2, ), 7, dtype=torch.int64)
    out = torch.full((1, ), 9, dtype=torch.int64)
    one_element[(1, )](words, out, out, right, ctx, GET=get)
    e = raised(lambda: tx.check(rt))
    assert isinstance(e, tessera.InvalidArgumentError)
    name = "g" if get else "p"
    assert e.message.startswith(f"{name} on PE {rt.pe}: pointer [address "), e.message
    assert e.message.endswith(f"(outside the heap), +8 bytes) is not inside the symmetric heap "
                              f"of {rt.heap_size} bytes"), e.message
    assert (words == 7).all()
    assert out.item() == (0 if get else 9)
    rt.barrier()


@pytest.mark.parametrize("get", [False, True], ids=["p", "g"])
def test_p_and_g_of_two_byte_elements_need_a_mapped_peer(rt, ctx, get):
    right, left = neighbours(rt)
    if mapped(rt, right):
        pytest.skip("every peer is mapped here (one node)")
    a, a_t = sym(rt, 2, "float16", 1.0)
    out = torch.zeros(1, dtype=torch.float16)
    one_element[(1, )](a_t, out, out, right, ctx, GET=get)
    e = raised(lambda: tx.check(rt))
    assert isinstance(e, tessera.TransportError)
    name = "g" if get else "p"
    assert e.message.startswith(f"{name} on PE {rt.pe}: PE {right}'s heap is not mapped here")
    rt.barrier()
