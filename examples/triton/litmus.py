"""Message-passing litmus test: every PE sends its right neighbour a multi-row tile with
put_signal, ROUNDS times; the neighbour waits for the round's signal (acquire) and checks every
element of the tile. If the signal could overtake the tile (a put_signal without its release,
or a wait without its acquire), the receiver would see an old round's values: a violation.
The receiver acknowledges each round, so the sender never overwrites a tile not yet checked.
The number of violations must be 0.

    tessera-run -np 2 env TRITON_INTERPRET=1 python examples/triton/litmus.py [rounds]

One program per PE runs every round, as sender (to the right) and receiver (from the left).
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

ROWS, COLS, ROUNDS = 4, 8, 200


@triton.jit
def message_passing(staging, inbox, arrived, acked, violations, rounds, ctx, ROWS: tl.constexpr,
                    COLS: tl.constexpr):
    me = tx.my_pe(ctx)
    n = tx.n_pes(ctx)
    right, left = (me + 1) % n, (me + n - 1) % n
    offs = tl.arange(0, ROWS)[:, None] * COLS + tl.arange(0, COLS)[None, :]
    bad = tl.zeros((ROWS, COLS), dtype=tl.int32)
    for r in range(1, rounds + 1):
        # Send: the right neighbour has checked round r - 1, so its inbox may be overwritten.
        tx.wait_until(acked, tx.GE, r - 1, ctx)
        tl.store(staging + offs, (r * 1000 + offs) * n + me)
        tl.debug_barrier()  # the whole staging tile is written before the put reads it
        tx.put_signal(inbox + offs, staging + offs, arrived, r, tx.SET, right, ctx)
        # Receive round r from the left neighbour, check every element, acknowledge.
        tx.wait_until(arrived, tx.GE, r, ctx)
        seen = tl.load(inbox + offs)
        bad += (seen != (r * 1000 + offs) * n + left).to(tl.int32)
        tx.signal(acked, r, tx.SET, left, ctx)
    tl.store(violations, tl.sum(tl.sum(bad, axis=1), axis=0))


COMPILE_CHECKS = [
    compile_check(message_passing, dict(ROWS=ROWS, COLS=COLS), staging="*i32", inbox="*i32", arrived="*u64",
                  acked="*u64", violations="*i32", rounds="i32", ctx="*i64"),
]


def main(rounds):
    import tessera.torch as tt

    rt, ctx, dev = start()
    staging = tt.zeros(rt, (ROWS, COLS), dtype=torch.int32)  # a put's source: on the heap (proxy)
    inbox = tt.zeros(rt, (ROWS, COLS), dtype=torch.int32)
    arrived = tt.zeros(rt, (1,), dtype=torch.uint64)
    acked = tt.zeros(rt, (1,), dtype=torch.uint64)
    violations = torch.full((1,), -1, dtype=torch.int32, device=dev)
    message_passing[(1,)](staging, inbox, arrived, acked, violations, rounds, ctx, ROWS=ROWS, COLS=COLS)
    wait_for_kernels(rt, dev)
    bad = int(violations.item())
    report(rt, f"message-passing litmus, {ROWS} x {COLS} tile, {rounds} rounds from PE {(rt.pe - 1) % rt.n_pes}: "
           f"{bad} violations", bad == 0)
    rt.barrier()  # the last acknowledgement may still be on its way to this PE
    return end(rt, bad == 0, acked, arrived, inbox, staging)


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]) if len(sys.argv) > 1 else ROUNDS))
