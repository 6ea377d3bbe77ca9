"""Device pieces the examples' kernels share: a GEMM tile, a tile put into every other PE, and a
barrier kernel."""

import triton
import triton.language as tl

import tessera.triton as tx


@triton.jit
def matmul_tile(a, b, rows, cols, K: tl.constexpr, LDB: tl.constexpr, BM: tl.constexpr,
                BN: tl.constexpr, BK: tl.constexpr):
    """a[rows, :] @ b[:, cols] in fp32, summed over K in steps of BK; a and b are fp16 and
    row-major, a with K columns, b with LDB. Reads this PE's memory only."""
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        ks = k0 + tl.arange(0, BK)
        acc += tl.dot(tl.load(a + rows[:, None] * K + ks[None, :]),
                      tl.load(b + ks[:, None] * LDB + cols[None, :]))
    return acc


@triton.jit
def put_to_peers(tile, ctx):
    """Puts the tile at `tile` (this PE's symmetric heap) into the same place on every other PE,
    from the next PE on; like tx.put, complete and visible after a barrier."""
    me = tx.my_pe(ctx)
    n = tx.n_pes(ctx)
    for i in range(1, n):
        tx.put(tile, tile, (me + i) % n, ctx)  # same symmetric address on the peer


@triton.jit
def device_barrier(ctx):
    """Every PE's earlier puts are complete and visible everywhere once every PE has passed
    (launch it with one program)."""
    tx.barrier(ctx)
