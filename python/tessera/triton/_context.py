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
def control_word(ctx, word, pe):
    """A pointer to the uint64 word `word` of PE `pe`'s control page as mapped here (`pe`'s heap
    must be mapped). The control area lies at the same offset past every PE's heap."""
    offset = tl.load(ctx + L.CONTROL_PAGE) - heap_base(ctx, tl.load(ctx + L.MY_PE))
    return tl.cast(heap_base(ctx, pe) + offset, tl.pointer_type(tl.uint64)) + word
