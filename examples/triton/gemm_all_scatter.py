"""Bulk-synchronous GEMM + all-scatter: a Triton GEMM computes this PE's column block of
C = A @ B, then an all-scatter kernel puts the block into every PE's C, then a device barrier.
Every PE ends with the whole C; checked against torch.

    tessera-run -np 2 env TRITON_INTERPRET=1 python examples/triton/gemm_all_scatter.py

Three launches on one stream, each complete before the next starts: compute, communicate,
synchronise (the simplest overlap-free schedule, the baseline the other examples improve on).
"""

import sys

import torch
import triton
import triton.language as tl

import tessera.triton as tx

M, K, N_LOCAL = 32, 32, 16  # C is M x (n_pes * N_LOCAL); this PE owns columns [pe*N_LOCAL, +N_LOCAL)
BM, BN, BK = 16, 16, 16


@triton.jit
def gemm_column_block(a, b, c, ctx, M: tl.constexpr, K: tl.constexpr, N_LOCAL: tl.constexpr,
                      N: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """One BM x BN tile of this PE's column block: c[rows, me*N_LOCAL + cols] = a @ b (b: K x N_LOCAL)."""
    me = tx.my_pe(ctx)
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = tl.program_id(1) * BN + tl.arange(0, BN)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        ks = k0 + tl.arange(0, BK)
        acc += tl.dot(tl.load(a + rows[:, None] * K + ks[None, :]),
                      tl.load(b + ks[:, None] * N_LOCAL + cols[None, :]))
    tl.store(c + rows[:, None] * N + me * N_LOCAL + cols[None, :], acc)


@triton.jit
def all_scatter(c, ctx, N_LOCAL: tl.constexpr, N: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr):
    """Puts one tile of this PE's column block into the same place of every other PE's c."""
    me = tx.my_pe(ctx)
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = me * N_LOCAL + tl.program_id(1) * BN + tl.arange(0, BN)
    tile = c + rows[:, None] * N + cols[None, :]
    n = tx.n_pes(ctx)
    for i in range(1, n):
        tx.put(tile, tile, (me + i) % n, ctx)  # same symmetric address on the peer


@triton.jit
def device_barrier(ctx):
    """Every PE's earlier puts are complete and visible everywhere once every PE has passed."""
    tx.barrier(ctx)


def compile_checks(n_pes=2):
    n = n_pes * N_LOCAL
    return [
        dict(kernel=gemm_column_block,
             signature={"a": "*fp16", "b": "*fp16", "c": "*fp32", "ctx": "*i64", "M": "constexpr",
                        "K": "constexpr", "N_LOCAL": "constexpr", "N": "constexpr", "BM": "constexpr",
                        "BN": "constexpr", "BK": "constexpr"},
             constexprs=dict(M=M, K=K, N_LOCAL=N_LOCAL, N=n, BM=BM, BN=BN, BK=BK)),
        dict(kernel=all_scatter,
             signature={"c": "*fp32", "ctx": "*i64", "N_LOCAL": "constexpr", "N": "constexpr",
                        "BM": "constexpr", "BN": "constexpr"},
             constexprs=dict(N_LOCAL=N_LOCAL, N=n, BM=BM, BN=BN)),
        dict(kernel=device_barrier, signature={"ctx": "*i64"}, constexprs={}),
    ]


COMPILE_CHECKS = compile_checks()


def report(line):
    sys.stdout.write(line + "\n")  # one write: every PE prints into the launcher's one pipe
    sys.stdout.flush()


def main():
    import tessera
    import tessera.torch as tt

    rt = tessera.init(heap_size="64M")
    ctx = rt.triton_context()
    dev = ctx.device
    n = rt.n_pes * N_LOCAL
    # Every PE can rebuild every input: A is shared, B's column blocks are seeded by PE.
    a = torch.randn((M, K), generator=torch.Generator().manual_seed(7)).half()
    blocks = [torch.randn((K, N_LOCAL), generator=torch.Generator().manual_seed(100 + p)).half()
              for p in range(rt.n_pes)]
    c = tt.zeros(rt, (M, n), dtype=torch.float32)

    grid = (M // BM, N_LOCAL // BN)
    gemm_column_block[grid](a.to(dev), blocks[rt.pe].to(dev), c, ctx, M=M, K=K, N_LOCAL=N_LOCAL, N=n,
                            BM=BM, BN=BN, BK=BK)
    all_scatter[grid](c, ctx, N_LOCAL=N_LOCAL, N=n, BM=BM, BN=BN)
    device_barrier[(1,)](ctx)
    if dev.type != "cpu":
        torch.cuda.synchronize()
    tx.check(rt)

    reference = a.float() @ torch.cat(blocks, dim=1).float()
    ok = torch.allclose(c.cpu(), reference, rtol=1e-3, atol=1e-3)
    report(f"PE {rt.pe}: gemm + all-scatter, C = ({M} x {K}) @ ({K} x {n}) over {rt.n_pes} PEs: "
           f"{'ok' if ok else 'WRONG'}")
    rt.barrier()  # no PE frees C while a peer may still read it
    tt.free(c)
    rt.finalize()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
