"""How a Triton kernel reports a failure: it cannot throw or format text, so it fills this PE's
failure record (device/tessera/device/failure_record.hpp) with the failure's kind and operands,
and the host (rt.check_device(), tessera.triton.check(rt)) raises the error the C++ device API
raises for the same failure, with the same message.

A timeout also raises the job's abort, exactly as C++ detail::broadcast_abort does, so the PEs
waiting with this one end with peer_lost instead of running into their own timeouts. Argument
errors (bad PE, unmapped peer, checked-mode bounds) only record, as C++ reports them without
aborting; the failing access is suppressed."""

import triton
import triton.language as tl

from . import _layout as L
from ._context import control_word


@triton.jit
def _word(x):
    """An operand as the record stores it: 64 bits, unsigned values by their bit pattern."""
    return tl.cast(x, tl.int64)


@triton.jit
def record(ctx, code, kind, op, a0, a1, a2, a3, a4, a5, a6=0, a7=0, a8=0, a9=0, a10=0):
    """Writes this PE's failure record unless an earlier failure already did (the first failure
    of the PE is the one reported). Visible to the host once the kernel has ended. Operands
    a6..a10 (FAILURE_WORDS["arg_count"] is 11) only for the kinds that need more than six."""
    addr = tl.load(ctx + L.FAILURE_RECORD)
    if addr != 0:
        rec = tl.cast(addr, tl.pointer_type(tl.int64))
        empty = tl.cast(L.REC_EMPTY, tl.int64)
        prev = tl.atomic_cas(rec + L.REC_STATE, empty, tl.cast(L.REC_WRITING, tl.int64),
                             sem="acq_rel", scope="sys")
        if prev == empty:
            tl.store(rec + L.REC_CODE, _word(code))
            tl.store(rec + L.REC_KIND, _word(kind))
            tl.store(rec + L.REC_OP, _word(op))
            tl.store(rec + L.REC_PE, tl.load(ctx + L.MY_PE))
            tl.store(rec + L.REC_ARGS + 0, _word(a0))
            tl.store(rec + L.REC_ARGS + 1, _word(a1))
            tl.store(rec + L.REC_ARGS + 2, _word(a2))
            tl.store(rec + L.REC_ARGS + 3, _word(a3))
            tl.store(rec + L.REC_ARGS + 4, _word(a4))
            tl.store(rec + L.REC_ARGS + 5, _word(a5))
            tl.store(rec + L.REC_ARGS + 6, _word(a6))
            tl.store(rec + L.REC_ARGS + 7, _word(a7))
            tl.store(rec + L.REC_ARGS + 8, _word(a8))
            tl.store(rec + L.REC_ARGS + 9, _word(a9))
            tl.store(rec + L.REC_ARGS + 10, _word(a10))
            tl.atomic_xchg(rec + L.REC_STATE, tl.cast(L.REC_COMPLETE, tl.int64), sem="release",
                           scope="sys")


@triton.jit
def broadcast_abort(ctx):
    """Marks the job as aborting on this PE and on every PE mapped here: their waits end with
    peer_lost naming this PE. Peers on other nodes learn of it when this PE leaves the job."""
    if tl.load(ctx + L.CONTROL_PAGE) != 0:
        me = tl.load(ctx + L.MY_PE)
        # (A constexpr on the left of | is not a tensor operation under the interpreter.)
        word = tl.cast(me + 1, tl.uint64) | (L.ABORT_FAILED.value << 32)
        zero = tl.cast(0, tl.uint64)
        for pe in range(0, tl.load(ctx + L.N_PES)):
            if tl.load(ctx + L.HEAP_BASES + pe) != 0:
                tl.atomic_cas(control_word(ctx, L.ABORT_WORD, pe), zero, word, sem="relaxed",
                              scope="sys")


@triton.jit
def fail(ctx, code, kind, op, a0, a1, a2, a3, a4, a5, a6=0, a7=0, a8=0, a9=0, a10=0):
    """A failure that ends the job (a timeout): records it, then raises the abort."""
    record(ctx, code, kind, op, a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10)
    broadcast_abort(ctx)


@triton.jit
def aborting(ctx, op):
    """Non-zero (int32) when the job is aborting. When another PE raised the abort, records
    peer_lost (the calling wait gives up); when this PE did, it already recorded why."""
    stop = tl.cast(0, tl.int32)
    if tl.load(ctx + L.CONTROL_PAGE) != 0:
        me = tl.load(ctx + L.MY_PE)
        w = tl.atomic_load(control_word(ctx, L.ABORT_WORD, me), sem="relaxed", scope="sys")
        if w != 0:
            stop = 1
            if (w & 0xFFFFFFFF).to(tl.int64) - 1 != me:
                record(ctx, L.CODE_PEER_LOST, L.KIND_ABORTED, op, w, 0, 0, 0, 0, 0)
    return stop
