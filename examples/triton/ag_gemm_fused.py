"""Fused all-gather + GEMM in one launch, workgroup-specialised: the first N_COMM programs
communicate, pushing this PE's shard of A's rows into every PE's gathered A with put_signal
(the release orders the rows before the shard's ready flag); the other programs compute
C = all_gather(A) @ B tile by tile, each waiting (acquire) only for the shard its rows come
from, so tiles of early shards are computed while later shards are still in flight.
Checked against torch.

    tessera-run -np 2 env TRITON_INTERPRET=1 python examples/triton/ag_gemm_fused.py

Communication programs come first (program_id < N_COMM). A GPU starts the lowest program ids
first, and the interpreter runs programs one after another in id order: a compute program
only ever waits for communication programs, and only those of its own PE run earlier in the
same launch (other PEs' run in their own processes), so the order works in both. The other
order (compute first) would deadlock the interpreter: a program would wait for a later one.
"""

import os
import sys

import torch
import triton
import triton.language as tl

import tessera.triton as tx

sys.path.insert(0, os.path.dirname(__file__))  # harness/, when imported rather than run
from harness.compile_checks import compile_check  # noqa: E402
from harness.run import end, report, seeded, start, wait_for_kernels  # noqa: E402
from harness.tiles import matmul_tile  # noqa: E402

M_LOCAL, K, N = 16, 32, 32  # A's shard is M_LOCAL x K per PE; C is (n_pes * M_LOCAL) x N
BM, BN, BK = 16, 16, 16
N_COMM = 1  # communication programs per launch


@triton.jit
def ag_gemm(a_shard, a_full, ready, b, c, ctx, M_LOCAL: tl.constexpr, K: tl.constexpr,
            N: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
            N_COMM: tl.constexpr):
    pid = tl.program_id(0)
    me = tx.my_pe(ctx)
    n = tx.n_pes(ctx)
    if pid < N_COMM:
        # Communication: push this PE's shard to PEs pid, pid + N_COMM, ... (itself included).
        offs = tl.arange(0, M_LOCAL)[:, None] * K + tl.arange(0, K)[None, :]
        for target in range(pid, n, N_COMM):
            tx.put_signal(a_full + me * M_LOCAL * K + offs, a_shard + offs, ready + me, 1, tx.SET,
                          target, ctx)
    else:
        # Compute: one BM x BN tile of C; its rows lie in the shard of PE `source`.
        tile = pid - N_COMM
        tiles_n: tl.constexpr = N // BN
        rows = (tile // tiles_n) * BM + tl.arange(0, BM)
        cols = (tile % tiles_n) * BN + tl.arange(0, BN)
        source = (tile // tiles_n) * BM // M_LOCAL
        tx.wait_until(ready + source, tx.EQ, 1, ctx)
        acc = matmul_tile(a_full, b, rows, cols, K, N, BM, BN, BK)
        tl.store(c + rows[:, None] * N + cols[None, :], acc)


def compile_checks(n_pes=2):
    return [compile_check(ag_gemm, dict(M_LOCAL=M_LOCAL, K=K, N=N, BM=BM, BN=BN, BK=BK, N_COMM=N_COMM),
                          a_shard="*fp16", a_full="*fp16", ready="*u64", b="*fp16", c="*fp32", ctx="*i64")]


COMPILE_CHECKS = compile_checks()


def main():
    import tessera.torch as tt

    rt, ctx, dev = start()
    m = rt.n_pes * M_LOCAL
    shards = [seeded((M_LOCAL, K), p) for p in range(rt.n_pes)]
    b = seeded((K, N), 100 + rt.pe)
    # Symmetric: the shard is a put's source (a proxy reads sources from the heap), a_full and
    # ready are written by peers.
    a_shard = tt.zeros(rt, (M_LOCAL, K), dtype=torch.float16)
    a_full = tt.zeros(rt, (m, K), dtype=torch.float16)
    ready = tt.zeros(rt, (rt.n_pes,), dtype=torch.uint64)
    a_shard.copy_(shards[rt.pe].to(dev))
    c = torch.zeros((m, N), dtype=torch.float32, device=dev)

    compute_programs = (m // BM) * (N // BN)
    ag_gemm[(N_COMM + compute_programs,)](a_shard, a_full, ready, b.to(dev), c, ctx, M_LOCAL=M_LOCAL,
                                          K=K, N=N, BM=BM, BN=BN, BK=BK, N_COMM=N_COMM)
    wait_for_kernels(rt, dev)

    reference = torch.cat(shards).float() @ b.float()
    ok = torch.allclose(c.cpu(), reference, rtol=1e-3, atol=1e-3)
    report(rt, f"fused all-gather + gemm, {N_COMM} communication + {compute_programs} compute programs, "
           f"C = ({m} x {K}) @ ({K} x {N}) over {rt.n_pes} PEs", ok)
    rt.barrier()  # peers may still be pushing into this PE's a_full until they have all passed
    return end(rt, ok, ready, a_full, a_shard)


if __name__ == "__main__":
    sys.exit(main())
