"""One-shot all-reduce: every PE reads every peer's input in place, by pointer translation, and
sums. No data moves before the reduction: the inputs stay where they were written, and a PE
only has to know that every peer's input is ready. Program 0 of each PE announces "my input is
ready" to every PE (a release signal, add 1); every program waits (acquire) until all PEs have
announced, then loads its block from each PE and sums. A device barrier after the reduction
keeps a PE from overwriting its input while a peer may still read it. Several rounds, each
checked against torch.

    tessera-run -np 2 env TRITON_INTERPRET=1 python examples/triton/all_reduce.py

Under the interpreter, programs 1.. wait for program 0 of the same launch: an earlier program,
so the order works (the reverse, program 0 waiting for a later program, would not).
"""

import os
import sys

import torch
import triton
import triton.language as tl

import tessera.triton as tx

sys.path.insert(0, os.path.dirname(__file__))  # harness/, when imported rather than run
from harness.compile_checks import compile_check  # noqa: E402
from harness.run import end, report, start, wait_for_kernels  # noqa: E402
from harness.tiles import device_barrier  # noqa: E402

ELEMENTS, BLOCK, ROUNDS = 256, 64, 3


@triton.jit
def all_reduce_one_shot(x, out, ready, epoch, ctx, BLOCK: tl.constexpr):
    """out[block] = sum over PEs p of x[block] on p, once every PE's x is ready (round `epoch`)."""
    n = tx.n_pes(ctx)
    if tl.program_id(0) == 0:
        for p in range(0, n):
            tx.signal(ready, 1, tx.ADD, p, ctx)
    tx.wait_until(ready, tx.GE, epoch * n, ctx)
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for p in range(0, n):  # PE order, like the reference's sum
        acc += tx.load(x + offs, p, ctx)
    tl.store(out + offs, acc)


COMPILE_CHECKS = [
    compile_check(all_reduce_one_shot, dict(BLOCK=BLOCK), x="*fp32", out="*fp32", ready="*u64", epoch="i32",
                  ctx="*i64"),
    compile_check(device_barrier, {}, ctx="*i64"),
]


def round_input(pe, r):
    # Small integers: every sum is exact in fp32, so the check is equality.
    g = torch.Generator().manual_seed(1000 * r + pe)
    return torch.randint(-50, 50, (ELEMENTS,), generator=g).float()


def main():
    import tessera.torch as tt

    rt, ctx, dev = start()
    x = tt.zeros(rt, (ELEMENTS,), dtype=torch.float32)
    ready = tt.zeros(rt, (1,), dtype=torch.uint64)
    out = torch.zeros(ELEMENTS, dtype=torch.float32, device=dev)
    ok = True
    for r in range(1, ROUNDS + 1):
        x.copy_(round_input(rt.pe, r).to(dev))
        all_reduce_one_shot[(ELEMENTS // BLOCK,)](x, out, ready, r, ctx, BLOCK=BLOCK)
        device_barrier[(1,)](ctx)
        wait_for_kernels(rt, dev)
        reference = sum(round_input(p, r) for p in range(rt.n_pes))
        ok = ok and torch.equal(out.cpu(), reference)
    report(rt, f"one-shot all-reduce of {ELEMENTS} float32 over {rt.n_pes} PEs, {ROUNDS} rounds", ok)
    return end(rt, ok, ready, x)


if __name__ == "__main__":
    sys.exit(main())
