"""Message-passing litmus test: every PE sends its right neighbour a multi-row tile with
put_signal, ROUNDS times; the neighbour waits for the round's signal (acquire) and checks every
element of the tile. If the signal could overtake the tile (a put_signal without its release,
or a wait without its acquire), the receiver would see an old round's values: a violation.
The receiver acknowledges each round, so the sender never overwrites a tile not yet checked.
The number of violations must be 0.

    tessera-run -np 2 env TRITON_INTERPRET=1 python examples/triton/litmus.py [rounds]

One program per PE runs every round, as sender (to the right) and receiver (from the left).
"""

import sys

import torch
import triton
import triton.language as tl

import tessera.triton as tx

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
    dict(kernel=message_passing,
         signature={"staging": "*i32", "inbox": "*i32", "arrived": "*u64", "acked": "*u64",
                    "violations": "*i32", "rounds": "i32", "ctx": "*i64", "ROWS": "constexpr",
                    "COLS": "constexpr"},
         constexprs=dict(ROWS=ROWS, COLS=COLS)),
]


def report(line):
    sys.stdout.write(line + "\n")  # one write: every PE prints into the launcher's one pipe
    sys.stdout.flush()


def main(rounds):
    import tessera
    import tessera.torch as tt

    rt = tessera.init(heap_size="64M")
    ctx = rt.triton_context()
    dev = ctx.device
    staging = tt.zeros(rt, (ROWS, COLS), dtype=torch.int32)  # a put's source: on the heap (proxy)
    inbox = tt.zeros(rt, (ROWS, COLS), dtype=torch.int32)
    arrived = tt.zeros(rt, (1,), dtype=torch.uint64)
    acked = tt.zeros(rt, (1,), dtype=torch.uint64)
    violations = torch.full((1,), -1, dtype=torch.int32, device=dev)
    message_passing[(1,)](staging, inbox, arrived, acked, violations, rounds, ctx, ROWS=ROWS, COLS=COLS)
    if dev.type != "cpu":
        torch.cuda.synchronize()
    tx.check(rt)
    bad = int(violations.item())
    report(f"PE {rt.pe}: message-passing litmus, {ROWS} x {COLS} tile, {rounds} rounds from PE "
           f"{(rt.pe - 1) % rt.n_pes}: {bad} violations: {'ok' if bad == 0 else 'WRONG'}")
    rt.barrier()  # the last acknowledgement may still be on its way to this PE
    for t in (acked, arrived, inbox, staging):
        tt.free(t)
    rt.finalize()
    return 0 if bad == 0 else 1


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]) if len(sys.argv) > 1 else ROUNDS))
