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

import sys

import torch
import triton
import triton.language as tl

import tessera.triton as tx

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
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        ks = k0 + tl.arange(0, BK)
        acc += tl.dot(tl.load(a + rows[:, None] * K + ks[None, :]),
                      tl.load(b + ks[:, None] * N_LOCAL + cols[None, :]))
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
    tile = c + rows[:, None] * N + cols[None, :]
    n = tx.n_pes(ctx)
    for i in range(1, n):
        tx.put(tile, tile, (me + i) % n, ctx)


@triton.jit
def device_barrier(ctx):
    """Every PE's earlier puts are complete and visible everywhere once every PE has passed."""
    tx.barrier(ctx)


def compile_checks(n_pes=2):
    n = n_pes * N_LOCAL
    return [
        dict(kernel=gemm_producer,
             signature={"a": "*fp16", "b": "*fp16", "c": "*fp32", "ready": "*u64", "ctx": "*i64",
                        "K": "constexpr", "N_LOCAL": "constexpr", "N": "constexpr", "BM": "constexpr",
                        "BN": "constexpr", "BK": "constexpr"},
             constexprs=dict(K=K, N_LOCAL=N_LOCAL, N=n, BM=BM, BN=BN, BK=BK)),
        dict(kernel=tile_sender,
             signature={"c": "*fp32", "ready": "*u64", "ctx": "*i64", "N_LOCAL": "constexpr",
                        "N": "constexpr", "BM": "constexpr", "BN": "constexpr"},
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
    a = torch.randn((M, K), generator=torch.Generator().manual_seed(7)).half()
    blocks = [torch.randn((K, N_LOCAL), generator=torch.Generator().manual_seed(100 + p)).half()
              for p in range(rt.n_pes)]
    c = tt.zeros(rt, (M, n), dtype=torch.float32)
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
    if dev.type != "cpu":
        torch.cuda.synchronize()
    tx.check(rt)

    reference = a.float() @ torch.cat(blocks, dim=1).float()
    ok = torch.allclose(c.cpu(), reference, rtol=1e-3, atol=1e-3)
    report(f"PE {rt.pe}: producer-consumer gemm + per-tile put, {grid[0] * grid[1]} tiles of "
           f"{BM} x {BN} per PE, C = ({M} x {K}) @ ({K} x {n}) over {rt.n_pes} PEs: "
           f"{'ok' if ok else 'WRONG'}")
    rt.barrier()
    tt.free(ready)
    tt.free(c)
    rt.finalize()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
