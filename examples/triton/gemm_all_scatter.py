"""Bulk-synchronous GEMM + all-scatter: a Triton GEMM computes this PE's column block of
C = A @ B, then an all-scatter kernel puts the block into every PE's C, then a device barrier.
Every PE ends with the whole C; checked against torch.

    tessera-run -np 2 env TRITON_INTERPRET=1 python examples/triton/gemm_all_scatter.py

Three launches on one stream, each complete before the next starts: compute, communicate,
synchronise (the simplest overlap-free schedule, the baseline the other examples improve on).
"""

import os
import sys

import triton
import triton.language as tl

import tessera.triton as tx

sys.path.insert(0, os.path.dirname(__file__))  # harness/, when imported rather than run
from harness.compile_checks import compile_check  # noqa: E402
from harness.column_blocks import column_block_problem, column_block_product_ok  # noqa: E402
from harness.run import end, report, start, wait_for_kernels  # noqa: E402
from harness.tiles import device_barrier, matmul_tile, put_to_peers  # noqa: E402

M, K, N_LOCAL = 32, 32, 16  # C is M x (n_pes * N_LOCAL); this PE owns columns [pe*N_LOCAL, +N_LOCAL)
BM, BN, BK = 16, 16, 16


@triton.jit
def gemm_column_block(a, b, c, ctx, M: tl.constexpr, K: tl.constexpr, N_LOCAL: tl.constexpr,
                      N: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """One BM x BN tile of this PE's column block: c[rows, me*N_LOCAL + cols] = a @ b (b: K x N_LOCAL)."""
    me = tx.my_pe(ctx)
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = tl.program_id(1) * BN + tl.arange(0, BN)
    acc = matmul_tile(a, b, rows, cols, K, N_LOCAL, BM, BN, BK)
    tl.store(c + rows[:, None] * N + me * N_LOCAL + cols[None, :], acc)


@triton.jit
def all_scatter(c, ctx, N_LOCAL: tl.constexpr, N: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr):
    """Puts one tile of this PE's column block into the same place of every other PE's c."""
    me = tx.my_pe(ctx)
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = me * N_LOCAL + tl.program_id(1) * BN + tl.arange(0, BN)
    put_to_peers(c + rows[:, None] * N + cols[None, :], ctx)


def compile_checks(n_pes=2):
    n = n_pes * N_LOCAL
    return [
        compile_check(gemm_column_block, dict(M=M, K=K, N_LOCAL=N_LOCAL, N=n, BM=BM, BN=BN, BK=BK), a="*fp16",
                      b="*fp16", c="*fp32", ctx="*i64"),
        compile_check(all_scatter, dict(N_LOCAL=N_LOCAL, N=n, BM=BM, BN=BN), c="*fp32", ctx="*i64"),
        compile_check(device_barrier, {}, ctx="*i64"),
    ]


COMPILE_CHECKS = compile_checks()


def main():
    rt, ctx, dev = start()
    n = rt.n_pes * N_LOCAL
    # Every PE can rebuild every input: A is shared, B's column blocks are seeded by PE.
    a, blocks, c = column_block_problem(rt, M, K, N_LOCAL)

    grid = (M // BM, N_LOCAL // BN)
    gemm_column_block[grid](a.to(dev), blocks[rt.pe].to(dev), c, ctx, M=M, K=K, N_LOCAL=N_LOCAL, N=n,
                            BM=BM, BN=BN, BK=BK)
    all_scatter[grid](c, ctx, N_LOCAL=N_LOCAL, N=n, BM=BM, BN=BN)
    device_barrier[(1,)](ctx)
    wait_for_kernels(rt, dev)

    ok = column_block_product_ok(c, a, blocks)
    report(rt, f"gemm + all-scatter, C = ({M} x {K}) @ ({K} x {n}) over {rt.n_pes} PEs", ok)
    rt.barrier()  # no PE frees C while a peer may still read it
    return end(rt, ok, c)


if __name__ == "__main__":
    sys.exit(main())
