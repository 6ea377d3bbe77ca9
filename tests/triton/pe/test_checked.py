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
from tx_kernels import atomic, load_store, signal_wait, tile_copy


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
