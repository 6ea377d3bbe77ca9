"""Small kernels that call every function of tessera.triton, for the compile checks
(compile_check.py): a function is compiled only where a kernel calls it. Each entry of KERNELS
is what triton.compiler.ASTSource takes. Tiles are small; the shapes are the ones the tests use.

test_compile.py holds this module to covering tessera.triton.__all__ (every jit function named
there is called below as tx.<name>)."""

import triton
import triton.language as tl

import tessera.triton as tx
from tessera.triton import _proxy

R, C = 4, 16


@triton.jit
def rma_calls(ctx, dst, src, out, pe, R: tl.constexpr, C: tl.constexpr):
    r = tl.arange(0, R)[:, None]
    c = tl.arange(0, C)[None, :]
    tile = dst + r * C + c
    local = src + r * C + c
    mask = c < C - 3
    remote = tx.translate(tile, pe, ctx)
    tl.store(out + r * C + c, tl.load(remote, mask=mask, other=0.0), mask=mask)
    v = tx.load(tile, pe, ctx, mask=mask, other=0.0)
    tx.store(tile, v + 1.0, pe, ctx, mask=mask)
    tx.put(tile, local, pe, ctx, mask=mask)
    tx.get(local, tile, pe, ctx)
    tx.fence(ctx)
    tx.quiet(ctx)
    tl.store(out, tx.my_pe(ctx) + tx.n_pes(ctx))


@triton.jit
def atomic_calls(ctx, words, out, pe, N: tl.constexpr):
    i = tl.arange(0, N)
    p = words + i
    v = i.to(tl.uint64)
    acc = tx.atomic_add(p, v, pe, ctx)
    acc += tx.atomic_sub(p, v, pe, ctx, sem="release")
    acc += tx.atomic_xchg(p, v, pe, ctx, sem="acquire")
    acc += tx.atomic_and(p, v, pe, ctx, mask=i < 3)
    acc += tx.atomic_or(p, v, pe, ctx, sem="relaxed")
    acc += tx.atomic_xor(p, v, pe, ctx)
    acc += tx.atomic_min(p, v, pe, ctx)
    acc += tx.atomic_max(p, v, pe, ctx)
    acc += tx.atomic_cas(words + N, tl.cast(0, tl.uint64), tl.cast(1, tl.uint64), pe, ctx)
    tl.store(out + i, acc)


@triton.jit
def sync_calls(ctx, dst, src, sig, out, pe, R: tl.constexpr, C: tl.constexpr):
    r = tl.arange(0, R)[:, None]
    c = tl.arange(0, C)[None, :]
    tx.signal(sig, 1, tx.SET, pe, ctx)
    tx.signal(sig + 1, 2, tx.ADD, pe, ctx)
    tx.put_signal(dst + r * C + c, src + r * C + c, sig + 2, 1, tx.SET, pe, ctx)
    tx.put_signal(dst + r * C + c, src + r * C + c, sig + 3, 1, tx.ADD, pe, ctx, mask=c < 5)
    # The comparisons differ in one instruction; two of them are enough to compile the wait.
    seen = tx.wait_until(sig, tx.EQ, 1, ctx)
    seen += tx.wait_until(sig + 1, tx.GE, 1, ctx)
    tl.store(out, seen)


@triton.jit
def wait_calls(ctx, sigs, status, indices, out, N: tl.constexpr):
    i = tl.arange(0, N)
    hit = tx.test(sigs, tx.GE, 1, ctx).to(tl.int64)
    hit += tx.test_all(sigs + i, tx.EQ, 2, ctx, mask=i < 5).to(tl.int64)
    hit += tx.test_any(sigs + i, tx.NE, 0, ctx).to(tl.int64)
    hit += tx.wait_until_some(sigs + i, status + i, indices + i, tx.GE, 1, ctx, mask=i < 7)
    hit += tx.test_some(sigs + i, status + i, indices + i, tx.LT, 9, ctx)
    hit += tx.test_any(sigs + i, tx.GT, 3, ctx, mask=i < 6, status=status + i).to(tl.int64)
    tl.store(out, hit)


@triton.jit
def one_element_calls(ctx, words, doubles, halves, out, pe):
    # p / g of 64-bit words, doubles (through the proxy by their bits) and 2-byte elements.
    tx.p(words, 5, pe, ctx)
    tx.p(doubles + 1, 2.5, pe, ctx)
    tx.p(halves, 1.0, pe, ctx)
    v = tx.g(words + 1, pe, ctx).to(tl.float64) + tx.g(doubles, pe, ctx)
    v += tx.g(halves + 1, pe, ctx).to(tl.float64)
    tl.store(out, v)


@triton.jit
def float_atomic_calls(ctx, floats, doubles, out, pe, N: tl.constexpr):
    i = tl.arange(0, N)
    a = tx.atomic_add(floats + i, i.to(tl.float32), pe, ctx, sem="relaxed")
    b = tx.atomic_add(doubles + i, i.to(tl.float64), pe, ctx)
    c = tx.atomic_add(doubles, 0.5, pe, ctx, sem="release", scope="gpu")
    tl.store(out + i, a.to(tl.float64) + b + c)


@triton.jit
def barrier_call(ctx, team):
    tx.barrier(ctx)
    tx.barrier(ctx, team)


@triton.jit
def proxy_calls(ctx, dst, src, sig, words, out, pe, R: tl.constexpr, C: tl.constexpr):
    # The proxy producer directly, with every option (the tx.* calls above reach it only on
    # their default paths).
    r = tl.arange(0, R)[:, None]
    c = tl.arange(0, C)[None, :]
    ok = _proxy.proxy_put(dst + r * C + c, src + r * C + c, pe, ctx, mask=c < 9, WAIT=False)
    ok &= _proxy.proxy_get(src + r * C + c, dst + r * C + c, pe, ctx)
    ok &= _proxy.proxy_put_signal(dst + r * C + c, src + r * C + c, sig, 1, 1, pe, ctx)
    ok &= _proxy.proxy_signal(sig, 3, 0, pe, ctx, FENCED=False)
    i = tl.arange(0, 4)
    old = _proxy.proxy_atomic(words + i, i.to(tl.int64), 0, pe, ctx, AMO=_proxy.AMO_MAX)
    old += _proxy.proxy_atomic(words, 1, 0, pe, ctx, AMO=_proxy.AMO_CAS)
    _proxy.proxy_atomic(words + i, i.to(tl.int64), 0, pe, ctx, mask=i < 2, AMO=_proxy.AMO_STORE,
                        FETCH=False, FENCED=False)
    ok &= _proxy.proxy_fence(ctx)
    ok &= _proxy.proxy_quiet(ctx)
    tl.store(out + i, old + ok)


_TILE = {"R": R, "C": C}
KERNELS = {
    "rma_calls": dict(kernel=rma_calls,
                      signature={"ctx": "*i64", "dst": "*fp32", "src": "*fp32", "out": "*fp32",
                                 "pe": "i32", "R": "constexpr", "C": "constexpr"},
                      constexprs=_TILE),
    "atomic_calls": dict(kernel=atomic_calls,
                         signature={"ctx": "*i64", "words": "*u64", "out": "*u64", "pe": "i32",
                                    "N": "constexpr"},
                         constexprs={"N": 8}),
    "sync_calls": dict(kernel=sync_calls,
                       signature={"ctx": "*i64", "dst": "*fp32", "src": "*fp32", "sig": "*u64",
                                  "out": "*u64", "pe": "i32", "R": "constexpr", "C": "constexpr"},
                       constexprs=_TILE),
    "wait_calls": dict(kernel=wait_calls,
                       signature={"ctx": "*i64", "sigs": "*u64", "status": "*i32",
                                  "indices": "*i64", "out": "*i64", "N": "constexpr"},
                       constexprs={"N": 8}),
    "one_element_calls": dict(kernel=one_element_calls,
                              signature={"ctx": "*i64", "words": "*i64", "doubles": "*fp64",
                                         "halves": "*fp16", "out": "*fp64", "pe": "i32"},
                              constexprs={}),
    "float_atomic_calls": dict(kernel=float_atomic_calls,
                               signature={"ctx": "*i64", "floats": "*fp32", "doubles": "*fp64",
                                          "out": "*fp64", "pe": "i32", "N": "constexpr"},
                               constexprs={"N": 8}),
    "barrier_call": dict(kernel=barrier_call, signature={"ctx": "*i64", "team": "*i64"},
                         constexprs={}),
    "proxy_calls": dict(kernel=proxy_calls,
                        signature={"ctx": "*i64", "dst": "*fp32", "src": "*fp32", "sig": "*u64",
                                   "words": "*i64", "out": "*i64", "pe": "i32", "R": "constexpr",
                                   "C": "constexpr"},
                        constexprs=_TILE),
}
