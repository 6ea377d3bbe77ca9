"""tessera.triton: Tessera's symmetric heap inside Triton kernels.

    import tessera.triton as tx
    ctx = tx.context(rt)                      # rt.triton_context(): pass it to the kernel

    @triton.jit
    def kernel(x, sig, ctx, ...):
        peer = (tx.my_pe(ctx) + 1) % tx.n_pes(ctx)
        tx.put_signal(x + offs, tile_ptrs, sig, 1, tx.SET, peer, ctx)
        tx.wait_until(sig, tx.EQ, 1, ctx)

    tx.check(rt)                              # raises what a kernel's failure record says

A barrier over a tessera.Team: `tx.barrier(ctx, tm)` in the kernel, with `tm = tx.team(rt, t)`.

Every function is @triton.jit and takes the context tensor `ctx`; see docs/triton.md for what
each call makes visible to whom, the interpreter workflow and the Iris / Triton-distributed name
tables."""

from ._context import my_pe, n_pes
from ._layout import ADD, EQ, GE, GT, LE, LT, NE, SET
from .atomics import (atomic_add, atomic_and, atomic_cas, atomic_max, atomic_min, atomic_or,
                      atomic_sub, atomic_xchg, atomic_xor)
from .rma import fence, g, get, load, p, put, quiet, store, translate
from .sync import (NPOS, barrier, put_signal, signal, test, test_all, test_any, test_some,
                   wait_until, wait_until_some)


def context(rt):
    """The context tensor of runtime `rt` (rt.triton_context()): int64, on the device the heap
    lives on (the CPU on the host backend). Pass it to kernels as a pointer argument."""
    return rt.triton_context()


def team(rt, t, device=None):
    """The team tensor of tessera.Team `t` for tx.barrier(ctx, team): int64 words laid out as
    tessera.TRITON_CONTEXT_WORDS["team_words"] (the team's ranks and the address of its barrier
    words), on `device` (default: where rt's context lives). Make it once per team and keep it;
    it stays valid until finalize."""
    import torch

    if device is None:
        device = "cpu" if rt.backend == "host" else torch.device("cuda",
                                                                 torch.cuda.current_device())
    return torch.tensor(t._triton_team_words(), dtype=torch.int64, device=device)


def check(rt):
    """Raises the error a kernel of this PE recorded (rt.check_device()): the tessera error and
    message the C++ device API gives for the same failure; PeerLostError when another PE
    aborted the job. Call it after the kernels (once they completed)."""
    rt.check_device()


__all__ = [
    "ADD", "EQ", "GE", "GT", "LE", "LT", "NE", "NPOS", "SET", "atomic_add", "atomic_and",
    "atomic_cas", "atomic_max", "atomic_min", "atomic_or", "atomic_sub", "atomic_xchg",
    "atomic_xor", "barrier", "check", "context", "fence", "g", "get", "load", "my_pe", "n_pes",
    "p", "put", "put_signal", "quiet", "signal", "store", "team", "test", "test_all",
    "test_any", "test_some", "translate", "wait_until", "wait_until_some"
]
