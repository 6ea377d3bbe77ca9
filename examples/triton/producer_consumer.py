"""Producer-consumer overlap: a GEMM kernel and a communication kernel run side by side (two
streams on a GPU) and hand tiles over by per-tile flags. The GEMM sets a tile's flag (release)
as soon as the tile is stored; the communication kernel waits for each flag (acquire) and puts
that tile into every peer's C at once, so communication of early tiles overlaps computation of
later ones. Every PE ends with the whole C = A @ B; checked against torch.

    tessera-run -np 2 env TRITON_INTERPRET=1 python examples/triton/producer_consumer.py

Launch order matters. On a GPU the producer is launched first: the consumer's programs spin,
and launched first they could fill the GPU and leave the producer no room to run. Under
TRITON_INTERPRET=1 a launch runs all its programs to completion before returning, so the two
kernels run one after the other: producer, then consumer (whose waits then succeed at once).
Launched the other way round, the interpreted consumer would spin until the context's timeout.
"""

import os
import sys

import torch
import triton
import triton.language as tl

import tessera.triton as tx

sys.path.insert(0, os.path.dirname(__file__))  # harness/, when imported rather than run
from harness.compile_checks import compile_check  # noqa: E402
from harness.column_blocks import column_block_problem, column_block_product_ok  # noqa: E402
from harness.run import end, report, start, wait_for_kernels  # noqa: E402
from harness.tiles import device_barrier, matmul_tile, put_to_peers  # noqa: E402

M, K, N_LOCAL = 32, 32, 32  # C is M x (n_pes * N_LOCAL); this PE computes columns [pe*N_LOCAL, +N_LOCAL)
BM, BN, BK = 16, 16, 16


@triton.jit
def gemm_producer(a, b, c, ready, ctx, K: tl.constexpr, N_LOCAL: tl.constexpr, N: tl.constexpr,
                  BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """Computes one tile of this PE's column block, stores it, then sets its flag (release)."""
    me = tx.my_pe(ctx)
    tm, tn = tl.program_id(0), tl.program_id(1)
    rows = tm * BM + tl.arange(0, BM)
    cols = tn * BN + tl.arange(0, BN)
    acc = matmul_tile(a, b, rows, cols, K, N_LOCAL, BM, BN, BK)
    tl.store(c + rows[:, None] * N + me * N_LOCAL + cols[None, :], acc)
    # A signal to this PE: the release orders the tile's stores before the flag.
    tx.signal(ready + tm * tl.num_programs(1) + tn, 1, tx.SET, me, ctx)


@triton.jit
def tile_sender(c, ready, ctx, N_LOCAL: tl.constexpr, N: tl.constexpr, BM: tl.constexpr,
                BN: tl.constexpr):
    """Waits for one tile's flag (acquire), then puts the tile into every peer's C."""
    me = tx.my_pe(ctx)
    tm, tn = tl.program_id(0), tl.program_id(1)
    tx.wait_until(ready + tm * tl.num_programs(1) + tn, tx.EQ, 1, ctx)
    rows = tm * BM + tl.arange(0, BM)
    cols = me * N_LOCAL + tn * BN + tl.arange(0, BN)
    put_to_peers(c + rows[:, None] * N + cols[None, :], ctx)


def compile_checks(n_pes=2):
    n = n_pes * N_LOCAL
    return [
        compile_check(gemm_producer, dict(K=K, N_LOCAL=N_LOCAL, N=n, BM=BM, BN=BN, BK=BK), a="*fp16", b="*fp16",
                      c="*fp32", ready="*u64", ctx="*i64"),
        compile_check(tile_sender, dict(N_LOCAL=N_LOCAL, N=n, BM=BM, BN=BN), c="*fp32", ready="*u64", ctx="*i64"),
        compile_check(device_barrier, {}, ctx="*i64"),
    ]


COMPILE_CHECKS = compile_checks()


def main():
    import tessera.torch as tt

    rt, ctx, dev = start()
    n = rt.n_pes * N_LOCAL
    a, blocks, c = column_block_problem(rt, M, K, N_LOCAL)
    grid = (M // BM, N_LOCAL // BN)
    ready = tt.zeros(rt, (grid[0] * grid[1],), dtype=torch.uint64)  # only this PE's copy is used

    a_dev, b_dev = a.to(dev), blocks[rt.pe].to(dev)
    if dev.type == "cpu":  # the interpreter: launches run to completion, producer first
        gemm_producer[grid](a_dev, b_dev, c, ready, ctx, K=K, N_LOCAL=N_LOCAL, N=n, BM=BM, BN=BN, BK=BK)
        tile_sender[grid](c, ready, ctx, N_LOCAL=N_LOCAL, N=n, BM=BM, BN=BN)
    else:  # a GPU: two streams, running at the same time
        compute, comm = torch.cuda.Stream(), torch.cuda.Stream()
        compute.wait_stream(torch.cuda.current_stream())
        comm.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(compute):
            gemm_producer[grid](a_dev, b_dev, c, ready, ctx, K=K, N_LOCAL=N_LOCAL, N=n, BM=BM, BN=BN, BK=BK)
        with torch.cuda.stream(comm):
            tile_sender[grid](c, ready, ctx, N_LOCAL=N_LOCAL, N=n, BM=BM, BN=BN)
        torch.cuda.current_stream().wait_stream(compute)
        torch.cuda.current_stream().wait_stream(comm)
    device_barrier[(1,)](ctx)
    wait_for_kernels(rt, dev)

    ok = column_block_product_ok(c, a, blocks)
    report(rt, f"producer-consumer gemm + per-tile put, {grid[0] * grid[1]} tiles of {BM} x {BN} per PE, "
           f"C = ({M} x {K}) @ ({K} x {n}) over {rt.n_pes} PEs", ok)
    rt.barrier()
    return end(rt, ok, ready, c)


if __name__ == "__main__":
    sys.exit(main())
