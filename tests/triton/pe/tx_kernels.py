"""Kernels over every tessera.triton function, shared by the tests of this folder, and the
COMPILE_CHECKS list (kernel, signature, constexprs) that the compile tests build for sm_90 and
gfx942 (the same entries as examples/triton/*.py's)."""

import triton
import triton.language as tl

import tessera.triton as tx


@triton.jit
def tile_copy(dst, src, pe, ctx, rows, cols, ld_dst, ld_src, R: tl.constexpr, C: tl.constexpr,
              GET: tl.constexpr):
    """put (GET=False) or get of the R x C tile with leading dimensions ld_*, masked to its first
    `rows` x `cols` elements, then quiet."""
    r = tl.arange(0, R)[:, None]
    c = tl.arange(0, C)[None, :]
    mask = (r < rows) & (c < cols)
    if GET:
        tx.get(dst + r * ld_dst + c, src + r * ld_src + c, pe, ctx, mask=mask)
    else:
        tx.put(dst + r * ld_dst + c, src + r * ld_src + c, pe, ctx, mask=mask)
    tx.quiet(ctx)


@triton.jit
def load_store(ptr, local, pe, ctx, n, N: tl.constexpr, STORE: tl.constexpr):
    """STORE: writes local[:n] to ptr[:n] on pe (then fence); else reads ptr[:n] on pe into
    local (masked-off elements read as -1)."""
    offs = tl.arange(0, N)
    m = offs < n
    if STORE:
        tx.store(ptr + offs, tl.load(local + offs), pe, ctx, mask=m)
        tx.fence(ctx)
    else:
        tl.store(local + offs, tx.load(ptr + offs, pe, ctx, mask=m, other=-1))


@triton.jit
def translate(ptr, pe, out, ctx):
    """out[0] = the address of `ptr` on `pe` as mapped here."""
    tl.store(out, tl.cast(tx.translate(ptr, pe, ctx), tl.int64))


@triton.jit
def atomic(ptr, val, cmp, old, pe, ctx, n, N: tl.constexpr, OP: tl.constexpr,
           SEM: tl.constexpr, SCALAR: tl.constexpr):
    """old[i] = the previous value of the atomic OP of val[i] (cas: cmp[i] -> val[i]) on ptr[i]
    of pe, for i < n (cas: all N; SCALAR: element 0 alone, through a scalar pointer)."""
    if SCALAR:
        p = ptr
        v = tl.load(val)
        c = tl.load(cmp)
        m = None
        offs = 0
    else:
        offs = tl.arange(0, N)
        p = ptr + offs
        v = tl.load(val + offs)
        c = tl.load(cmp + offs)
        m = offs < n
    if OP == "add":
        o = tx.atomic_add(p, v, pe, ctx, mask=m, sem=SEM)
    elif OP == "sub":
        o = tx.atomic_sub(p, v, pe, ctx, mask=m, sem=SEM)
    elif OP == "xchg":
        o = tx.atomic_xchg(p, v, pe, ctx, mask=m, sem=SEM)
    elif OP == "and":
        o = tx.atomic_and(p, v, pe, ctx, mask=m, sem=SEM)
    elif OP == "or":
        o = tx.atomic_or(p, v, pe, ctx, mask=m, sem=SEM)
    elif OP == "xor":
        o = tx.atomic_xor(p, v, pe, ctx, mask=m, sem=SEM)
    elif OP == "min":
        o = tx.atomic_min(p, v, pe, ctx, mask=m, sem=SEM)
    elif OP == "max":
        o = tx.atomic_max(p, v, pe, ctx, mask=m, sem=SEM)
    else:
        tl.static_assert(OP == "cas")
        o = tx.atomic_cas(p, c, v, pe, ctx, sem=SEM)
        m = None  # atomic_cas takes no mask: every element was swapped or not
    tl.store(old + offs, o, mask=m)


@triton.jit
def signal_wait(sig_out, value, pe, sig_in, target, seen, ctx, OP: tl.constexpr,
                CMP: tl.constexpr, SIGNAL: tl.constexpr, WAIT: tl.constexpr):
    """SIGNAL: signal(sig_out, value, OP) on pe; WAIT: then seen[0] = wait_until(sig_in, CMP,
    target)."""
    if SIGNAL:
        tx.signal(sig_out, value, OP, pe, ctx)
    if WAIT:
        tl.store(seen, tx.wait_until(sig_in, CMP, target, ctx))


@triton.jit
def put_signal_tile(dst, src, sig, value, pe, ctx, rows, R: tl.constexpr, C: tl.constexpr,
                    OP: tl.constexpr):
    """put_signal of the R x C tile (its first `rows` rows) at src to dst on pe."""
    r = tl.arange(0, R)[:, None]
    c = tl.arange(0, C)[None, :]
    offs = r * C + c
    tx.put_signal(dst + offs, src + offs, sig, value, OP, pe, ctx, mask=r < rows)


@triton.jit
def wait_then_read(sig, target, src, out, ctx, N: tl.constexpr):
    """Waits for sig >= target, then copies the local src[:N] into out (what the signal's
    writer made visible before its release)."""
    tx.wait_until(sig, tx.GE, target, ctx)
    offs = tl.arange(0, N)
    tl.store(out + offs, tl.load(src + offs))


@triton.jit
def barrier_rounds(slots, bad, rounds, ctx):
    """`rounds` barriers; before the i-th each PE signals i + 1 into its slot (uint64, of parity
    i % 2) on every PE, after it each PE counts the slots that do not hold i + 1 into bad[0]. A
    slot of parity i % 2 is written again only after barrier i + 1, which no PE passes before
    all read it."""
    me = tx.my_pe(ctx)
    n = tx.n_pes(ctx)
    wrong = tl.cast(0, tl.int64)
    for i in range(0, rounds):
        half = slots + (i % 2) * n
        for p in range(0, n):
            tx.signal(half + me, i + 1, tx.SET, p, ctx)
        tx.barrier(ctx)
        for p in range(0, n):
            wrong += (tl.load(half + p) != i + 1).to(tl.int64)
    tl.store(bad, wrong)


@triton.jit
def barrier_once(ctx):
    tx.barrier(ctx)


@triton.jit
def message_passing(inbox, staging, arrived, acked, bad, rounds, peer, ctx, R: tl.constexpr,
                    C: tl.constexpr, PRODUCER: tl.constexpr, SIGNAL_FIRST: tl.constexpr):
    """The message-passing litmus over an R x C tile. Round r: the producer waits until the
    consumer is done with round r - 1, fills its staging tile with r's pattern and put_signals
    it into the consumer's inbox (arrived = r); the consumer waits for arrived >= r, reads the
    tile, counts the round in bad[0] if any element is not r's pattern, and acks r.
    SIGNAL_FIRST is the mutant that breaks the ordering put_signal guarantees: it signals
    first, and writes the tile only once the consumer has acked (read) the round."""
    offs = tl.arange(0, R)[:, None] * C + tl.arange(0, C)[None, :]
    violations = tl.cast(0, tl.int32)
    for r in range(1, rounds + 1):
        pattern = r * 4096 + offs
        if PRODUCER:
            tx.wait_until(acked, tx.GE, r - 1, ctx)
            tl.store(staging + offs, pattern)
            if SIGNAL_FIRST:
                tx.signal(arrived, r, tx.SET, peer, ctx)
                tx.wait_until(acked, tx.GE, r, ctx)
                tx.put(inbox + offs, staging + offs, peer, ctx)
                tx.quiet(ctx)
            else:
                tx.put_signal(inbox + offs, staging + offs, arrived, r, tx.SET, peer, ctx)
        else:
            tx.wait_until(arrived, tx.GE, r, ctx)
            seen = tl.load(inbox + offs)
            violations += (tl.sum((seen != pattern).to(tl.int32)) != 0).to(tl.int32)
            tx.signal(acked, r, tx.SET, peer, ctx)
    tl.store(bad, violations)


@triton.jit
def signal_tests(sigs, value, out, ctx, n, N: tl.constexpr, CMP: tl.constexpr):
    """out[i] = test(sigs[i]) for the block sigs[:N]; out[N] = test of the scalar sigs[0];
    out[N + 1] = test_all and out[N + 2] = test_any over the block masked to its first n."""
    offs = tl.arange(0, N)
    m = offs < n
    tl.store(out + offs, tx.test(sigs + offs, CMP, value, ctx).to(tl.int64))
    tl.store(out + N, tx.test(sigs, CMP, value, ctx).to(tl.int64))
    tl.store(out + N + 1, tx.test_all(sigs + offs, CMP, value, ctx, mask=m).to(tl.int64))
    tl.store(out + N + 2, tx.test_any(sigs + offs, CMP, value, ctx, mask=m).to(tl.int64))


@triton.jit
def signal_each(sigs, order, value, pe, ctx, n):
    """Signals (set) value into sigs[order[k]] on pe for k < n, one after another, then quiet
    (delivered through the proxy too)."""
    for k in range(0, n):
        tx.signal(sigs + tl.load(order + k), value, tx.SET, pe, ctx)
    tx.quiet(ctx)


@triton.jit
def wait_some(sigs, status, indices, count, value, ctx, n, N: tl.constexpr, CMP: tl.constexpr):
    """count[0] = wait_until_some over sigs[:N] masked to its first n (status, indices alike)."""
    offs = tl.arange(0, N)
    c = tx.wait_until_some(sigs + offs, status + offs, indices + offs, CMP, value, ctx,
                           mask=offs < n)
    tl.store(count, c)


@triton.jit
def sweep_signals(sigs, status, indices, count, value, ctx, n, N: tl.constexpr,
                     CMP: tl.constexpr, ANY: tl.constexpr):
    """count[0] = test_some over sigs[:N] masked to its first n (ANY: test_any with status, its
    index in count[0])."""
    offs = tl.arange(0, N)
    if ANY:
        c = tx.test_any(sigs + offs, CMP, value, ctx, mask=offs < n, status=status + offs)
    else:
        c = tx.test_some(sigs + offs, status + offs, indices + offs, CMP, value, ctx,
                         mask=offs < n)
    tl.store(count, c)


@triton.jit
def drain(sigs, status, indices, calls, value, ctx, N: tl.constexpr):
    """Calls wait_until_some(sigs[:N] >= value) until all N were found, appending each call's
    indices to indices[] and its count to calls[] (a count of 0, a failed wait, ends it)."""
    offs = tl.arange(0, N)
    total = 0
    k = 0
    while total < N:
        c = tx.wait_until_some(sigs + offs, status + offs, indices + total + offs, tx.GE, value,
                               ctx)
        tl.store(calls + k, c)
        k += 1
        total += c
        if c == 0:
            total = N
    tl.store(calls + k, -1)


@triton.jit
def one_element(ptr, value, out, pe, ctx, GET: tl.constexpr):
    """GET: out[0] = g(ptr, pe); else p(ptr, value[0], pe), then quiet."""
    if GET:
        tl.store(out, tx.g(ptr, pe, ctx))
    else:
        tx.p(ptr, tl.load(value), pe, ctx)
        tx.quiet(ctx)


@triton.jit
def team_barrier_rounds(slots, bad, rounds, ctx, team):
    """barrier_rounds over the members of `team` (tx.team): before team barrier i each member
    signals i + 1 into its slot (by team rank, parity i % 2) on every member; after it counts
    the member slots that do not hold i + 1 into bad[0]."""
    start = tl.load(team + 0)
    stride = tl.load(team + 1)
    size = tl.load(team + 2)
    me = tl.load(team + 3)
    wrong = tl.cast(0, tl.int64)
    for i in range(0, rounds):
        half = slots + (i % 2) * size
        for r in range(0, size):
            tx.signal(half + me, i + 1, tx.SET, start + r * stride, ctx)
        tx.barrier(ctx, team)
        for r in range(0, size):
            wrong += (tl.load(half + r) != i + 1).to(tl.int64)
    tl.store(bad, wrong)


@triton.jit
def team_barrier_once(ctx, team):
    tx.barrier(ctx, team)


COMPILE_CHECKS = [
    dict(kernel=tile_copy,
         signature={"dst": "*fp32", "src": "*fp32", "pe": "i32", "ctx": "*i64", "rows": "i32",
                    "cols": "i32", "ld_dst": "i32", "ld_src": "i32", "R": "constexpr",
                    "C": "constexpr", "GET": "constexpr"},
         constexprs=dict(R=4, C=8, GET=False)),
    dict(kernel=tile_copy,
         signature={"dst": "*fp32", "src": "*fp32", "pe": "i32", "ctx": "*i64", "rows": "i32",
                    "cols": "i32", "ld_dst": "i32", "ld_src": "i32", "R": "constexpr",
                    "C": "constexpr", "GET": "constexpr"},
         constexprs=dict(R=4, C=8, GET=True)),
    dict(kernel=load_store,
         signature={"ptr": "*i32", "local": "*i32", "pe": "i32", "ctx": "*i64", "n": "i32",
                    "N": "constexpr", "STORE": "constexpr"},
         constexprs=dict(N=16, STORE=True)),
    dict(kernel=load_store,
         signature={"ptr": "*i32", "local": "*i32", "pe": "i32", "ctx": "*i64", "n": "i32",
                    "N": "constexpr", "STORE": "constexpr"},
         constexprs=dict(N=16, STORE=False)),
    dict(kernel=translate, signature={"ptr": "*fp32", "pe": "i32", "out": "*i64", "ctx": "*i64"},
         constexprs={}),
] + [
    dict(kernel=atomic,
         signature={"ptr": "*i32", "val": "*i32", "cmp": "*i32", "old": "*i32", "pe": "i32",
                    "ctx": "*i64", "n": "i32", "N": "constexpr", "OP": "constexpr",
                    "SEM": "constexpr", "SCALAR": "constexpr"},
         constexprs=dict(N=16, OP=op, SEM="acq_rel", SCALAR=False))
    for op in ("add", "sub", "xchg", "and", "or", "xor", "min", "max", "cas")
] + [
    dict(kernel=atomic,
         signature={"ptr": "*fp32", "val": "*fp32", "cmp": "*fp32", "old": "*fp32", "pe": "i32",
                    "ctx": "*i64", "n": "i32", "N": "constexpr", "OP": "constexpr",
                    "SEM": "constexpr", "SCALAR": "constexpr"},
         constexprs=dict(N=16, OP="add", SEM="relaxed", SCALAR=True)),
    dict(kernel=signal_wait,
         signature={"sig_out": "*u64", "value": "u64", "pe": "i32", "sig_in": "*u64",
                    "target": "u64", "seen": "*u64", "ctx": "*i64", "OP": "constexpr",
                    "CMP": "constexpr", "SIGNAL": "constexpr", "WAIT": "constexpr"},
         constexprs=dict(OP=tx.SET, CMP=tx.GE, SIGNAL=True, WAIT=True)),
    dict(kernel=signal_wait,
         signature={"sig_out": "*u64", "value": "u64", "pe": "i32", "sig_in": "*u64",
                    "target": "u64", "seen": "*u64", "ctx": "*i64", "OP": "constexpr",
                    "CMP": "constexpr", "SIGNAL": "constexpr", "WAIT": "constexpr"},
         constexprs=dict(OP=tx.ADD, CMP=tx.EQ, SIGNAL=True, WAIT=False)),
    dict(kernel=put_signal_tile,
         signature={"dst": "*fp32", "src": "*fp32", "sig": "*u64", "value": "u64", "pe": "i32",
                    "ctx": "*i64", "rows": "i32", "R": "constexpr", "C": "constexpr",
                    "OP": "constexpr"},
         constexprs=dict(R=4, C=8, OP=tx.SET)),
    dict(kernel=barrier_rounds,
         signature={"slots": "*u64", "bad": "*i64", "rounds": "i32", "ctx": "*i64"},
         constexprs={}),
    dict(kernel=message_passing,
         signature={"inbox": "*i32", "staging": "*i32", "arrived": "*u64", "acked": "*u64",
                    "bad": "*i32", "rounds": "i32", "peer": "i32", "ctx": "*i64",
                    "R": "constexpr", "C": "constexpr", "PRODUCER": "constexpr",
                    "SIGNAL_FIRST": "constexpr"},
         constexprs=dict(R=4, C=8, PRODUCER=True, SIGNAL_FIRST=False)),
]
