"""Reading the context tensor (rt.triton_context(), layout in _layout.py) from jit code."""

import triton
import triton.language as tl

from . import _layout as L


@triton.jit
def my_pe(ctx):
    """This PE's index in the job (int32 scalar)."""
    return tl.load(ctx + L.MY_PE).to(tl.int32)


@triton.jit
def n_pes(ctx):
    """The number of PEs in the job (int32 scalar)."""
    return tl.load(ctx + L.N_PES).to(tl.int32)


@triton.jit
def heap_base(ctx, pe):
    """The address (int64) of PE `pe`'s heap as mapped here; 0 where it is not mapped (another
    node). `pe` must be in [0, n_pes)."""
    return tl.load(ctx + L.HEAP_BASES + pe)


@triton.jit
def control_base(ctx, pe):
    """The address (int64) of PE `pe`'s control page as mapped here; 0 where it is not mapped
    (exactly where its heap is not). `pe` must be in [0, n_pes)."""
    return tl.load(ctx + L.HEAP_BASES + tl.load(ctx + L.N_PES) + pe)


@triton.jit
def control_word(ctx, word, pe):
    """A pointer to the uint64 word `word` of PE `pe`'s control page as mapped here (`pe`'s heap
    must be mapped). Read from the context's control pages: a control page need not lie at any
    offset from its PE's heap."""
    return tl.cast(control_base(ctx, pe), tl.pointer_type(tl.uint64)) + word


@triton.jit
def control_wire_word(ctx, word):
    """A pointer whose offset from this PE's heap base is the segment offset the network proxy
    names for word `word` of a control page (_proxy.proxy_atomic takes pointers and sends their
    heap offsets). Only for handing to the proxy: it points at nothing."""
    at = heap_base(ctx, tl.load(ctx + L.MY_PE)) + tl.load(ctx + L.CONTROL_OFFSET) + 8 * word
    return tl.cast(at, tl.pointer_type(tl.uint64))
