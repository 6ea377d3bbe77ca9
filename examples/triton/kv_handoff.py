"""KV-cache hand-off for disaggregated serving, and prefix sharing.

Hand-off: prefill PEs (every PE but the last) each compute one request's KV cache page by page
and write each page into the decode PE's (the last PE's) heap with put_signal: the page, then
its ready flag, with release. The decode PE's attention kernel (softmax(q K^T / sqrt(D)) V over
the pages, one program per request) waits for each page's flag (acquire) and consumes the pages
as they arrive, while later pages are still being computed and sent.

Prefix sharing: PE 0 publishes the KV pages of a prompt prefix every request shares, once, in
its own heap, and raises a ready counter (release, add 1 per page) on every other PE. Each of
those PEs waits for its counter (acquire), then attends over the prefix pages in place, reading
them from PE 0's heap by pointer translation (tx.load on PE 0, no copy), followed by its own
suffix pages. A PE on another node than PE 0 (its heap not mapped there) fetches the prefix
with one tx.get through the network proxy instead, then reads its copy.

    tessera-run -np 2 env TRITON_INTERPRET=1 python examples/triton/kv_handoff.py
    tessera-run -np 4 env TRITON_INTERPRET=1 python examples/triton/kv_handoff.py
    tessera-run -np 2 --node-ids a,b env TRITON_INTERPRET=1 python examples/triton/kv_handoff.py

Each kernel only waits for other PEs' programs, never for a later program of its own launch,
so the interpreter's one-program-after-another order works. Checked against torch on every PE
that computes attention.
"""

import math
import os
import sys

import torch
import triton
import triton.language as tl

import tessera.triton as tx

sys.path.insert(0, os.path.dirname(__file__))  # harness/, when imported rather than run
from harness.compile_checks import compile_check  # noqa: E402
from harness.run import end, report, say, seeded, start, wait_for_kernels  # noqa: E402

PAGE, HIDDEN, D = 16, 16, 16  # tokens per page, model width, head dimension
PAGES = 4  # KV pages of one request's prompt (hand-off)
PREFIX_PAGES, SUFFIX_PAGES = 2, 2  # shared prefix pages (PE 0) and each consumer's own pages
PAGE_WORDS = 2 * PAGE * D  # a page holds K (PAGE x D) then V (PAGE x D), fp32


@triton.jit
def project_page(x, wk, wv, kv, page, HIDDEN: tl.constexpr, D: tl.constexpr, PAGE: tl.constexpr):
    """kv[page] = (K, V) = (x Wk, x Wv) of the page's tokens; fp16 inputs, fp32 results."""
    tokens = page * PAGE + tl.arange(0, PAGE)
    h = tl.arange(0, HIDDEN)
    d = tl.arange(0, D)
    xs = tl.load(x + tokens[:, None] * HIDDEN + h[None, :])
    k = tl.dot(xs, tl.load(wk + h[:, None] * D + d[None, :]))
    v = tl.dot(xs, tl.load(wv + h[:, None] * D + d[None, :]))
    rows = tl.arange(0, PAGE)[:, None] * D + d[None, :]
    tl.store(kv + page * 2 * PAGE * D + rows, k)
    tl.store(kv + page * 2 * PAGE * D + PAGE * D + rows, v)


@triton.jit
def attend_page(q, k, v, m, l, acc, scale):
    """One page of online softmax: the running max m, sum l and output acc, updated by (k, v)."""
    s = tl.sum(k * q[None, :], axis=1) * scale
    m_new = tl.maximum(m, tl.max(s, axis=0))
    alpha = tl.exp(m - m_new)
    p = tl.exp(s - m_new)
    return m_new, l * alpha + tl.sum(p, axis=0), acc * alpha + tl.sum(p[:, None] * v, axis=0)


@triton.jit
def prefill_pages(x, wk, wv, staging, kv_cache, page_ready, request, decode_pe, ctx,
                  HIDDEN: tl.constexpr, D: tl.constexpr, PAGE: tl.constexpr, PAGES: tl.constexpr):
    """One page per program: computes it into this PE's staging, then put_signals it into page
    `page` of request `request` in the decode PE's cache (page, then flag, with release)."""
    page = tl.program_id(0)
    project_page(x, wk, wv, staging, page, HIDDEN, D, PAGE)
    tl.debug_barrier()  # the whole page is in staging before the put reads it
    words = page * 2 * PAGE * D + tl.arange(0, 2 * PAGE * D)
    tx.put_signal(kv_cache + request * PAGES * 2 * PAGE * D + words, staging + words,
                  page_ready + request * PAGES + page, 1, tx.SET, decode_pe, ctx)


@triton.jit
def decode_attention(q, kv_cache, page_ready, out, scale, ctx, D: tl.constexpr, PAGE: tl.constexpr,
                     PAGES: tl.constexpr):
    """One request per program: attends over its pages in order, each once its flag is set."""
    request = tl.program_id(0)
    d = tl.arange(0, D)
    rows = tl.arange(0, PAGE)[:, None] * D + d[None, :]
    qv = tl.load(q + request * D + d)
    m = tl.full([], float("-inf"), tl.float32)
    l = tl.zeros([], tl.float32)
    acc = tl.zeros([D], tl.float32)
    for page in range(0, PAGES):
        tx.wait_until(page_ready + request * PAGES + page, tx.EQ, 1, ctx)
        base = kv_cache + (request * PAGES + page) * 2 * PAGE * D
        m, l, acc = attend_page(qv, tl.load(base + rows), tl.load(base + PAGE * D + rows), m, l, acc, scale)
    tl.store(out + request * D + d, acc / l)


@triton.jit
def publish_prefix(x, wk, wv, prefix_kv, prefix_ready, ctx, HIDDEN: tl.constexpr, D: tl.constexpr,
                   PAGE: tl.constexpr):
    """One prefix page per program, computed into this PE's heap, then announced to every other
    PE (release: the page's stores are visible to whoever acquires the counter)."""
    project_page(x, wk, wv, prefix_kv, tl.program_id(0), HIDDEN, D, PAGE)
    me = tx.my_pe(ctx)
    n = tx.n_pes(ctx)
    for i in range(1, n):
        tx.signal(prefix_ready, 1, tx.ADD, (me + i) % n, ctx)


@triton.jit
def project_suffix(x, wk, wv, kv, HIDDEN: tl.constexpr, D: tl.constexpr, PAGE: tl.constexpr):
    project_page(x, wk, wv, kv, tl.program_id(0), HIDDEN, D, PAGE)


@triton.jit
def prefix_attention(q, prefix_kv, prefix_ready, publisher, suffix_kv, out, scale, ctx,
                     D: tl.constexpr, PAGE: tl.constexpr, PREFIX_PAGES: tl.constexpr,
                     SUFFIX_PAGES: tl.constexpr, IN_PLACE: tl.constexpr):
    """Attends over the shared prefix, then over the local suffix. IN_PLACE (the publisher's heap
    is mapped here): the prefix pages are read where they are, on `publisher`; otherwise (another
    node) they are first fetched into this PE's copy of prefix_kv with one get."""
    d = tl.arange(0, D)
    rows = tl.arange(0, PAGE)[:, None] * D + d[None, :]
    qv = tl.load(q + d)
    m = tl.full([], float("-inf"), tl.float32)
    l = tl.zeros([], tl.float32)
    acc = tl.zeros([D], tl.float32)
    tx.wait_until(prefix_ready, tx.GE, PREFIX_PAGES, ctx)
    if not IN_PLACE:
        words = tl.arange(0, PREFIX_PAGES * 2 * PAGE * D)
        tx.get(prefix_kv + words, prefix_kv + words, publisher, ctx)
        tl.debug_barrier()  # the whole prefix is here before any thread reads it
    for page in range(0, PREFIX_PAGES):
        base = prefix_kv + page * 2 * PAGE * D
        if IN_PLACE:
            k = tx.load(base + rows, publisher, ctx)
            v = tx.load(base + PAGE * D + rows, publisher, ctx)
        else:
            k = tl.load(base + rows)
            v = tl.load(base + PAGE * D + rows)
        m, l, acc = attend_page(qv, k, v, m, l, acc, scale)
    for page in range(0, SUFFIX_PAGES):
        base = suffix_kv + page * 2 * PAGE * D
        m, l, acc = attend_page(qv, tl.load(base + rows), tl.load(base + PAGE * D + rows), m, l, acc, scale)
    tl.store(out + d, acc / l)


_SIZES = dict(HIDDEN=HIDDEN, D=D, PAGE=PAGE)
COMPILE_CHECKS = [
    compile_check(prefill_pages, dict(_SIZES, PAGES=PAGES), x="*fp16", wk="*fp16", wv="*fp16", staging="*fp32",
                  kv_cache="*fp32", page_ready="*u64", request="i32", decode_pe="i32", ctx="*i64"),
    compile_check(decode_attention, dict(D=D, PAGE=PAGE, PAGES=PAGES), q="*fp32", kv_cache="*fp32",
                  page_ready="*u64", out="*fp32", scale="fp32", ctx="*i64"),
    compile_check(publish_prefix, _SIZES, x="*fp16", wk="*fp16", wv="*fp16", prefix_kv="*fp32",
                  prefix_ready="*u64", ctx="*i64"),
    compile_check(project_suffix, _SIZES, x="*fp16", wk="*fp16", wv="*fp16", kv="*fp32"),
    *[compile_check(prefix_attention,
                    dict(D=D, PAGE=PAGE, PREFIX_PAGES=PREFIX_PAGES, SUFFIX_PAGES=SUFFIX_PAGES, IN_PLACE=in_place),
                    q="*fp32", prefix_kv="*fp32", prefix_ready="*u64", publisher="i32", suffix_kv="*fp32",
                    out="*fp32", scale="fp32", ctx="*i64")
      for in_place in (True, False)],
]


def reference_attention(q, x, wk, wv):
    """softmax(q K^T / sqrt(D)) V with K, V projected from the tokens x, in fp32."""
    k, v = x.float() @ wk.float(), x.float() @ wv.float()
    return torch.softmax((q @ k.T) / math.sqrt(D), dim=-1) @ v


def main():
    import tessera.torch as tt

    rt, ctx, dev = start()
    if rt.n_pes < 2:
        say("kv_handoff needs at least 2 PEs (a prefill and a decode PE)")
        return 2
    me, n = rt.pe, rt.n_pes
    decode_pe, requests, publisher = n - 1, n - 1, 0
    scale = 1.0 / math.sqrt(D)
    # The model and every PE's inputs are seeded, so any PE can compute any reference.
    wk, wv = seeded((HIDDEN, D), 1, 0.25), seeded((HIDDEN, D), 2, 0.25)
    prompt = lambda r: seeded((PAGES * PAGE, HIDDEN), 100 + r)  # request r is prefilled on PE r
    query = lambda r: torch.randn(D, generator=torch.Generator().manual_seed(200 + r))
    prefix, suffix = seeded((PREFIX_PAGES * PAGE, HIDDEN), 300), lambda pe: seeded((SUFFIX_PAGES * PAGE, HIDDEN), 400 + pe)
    wk_d, wv_d = wk.to(dev), wv.to(dev)

    staging = tt.zeros(rt, (PAGES, PAGE_WORDS), dtype=torch.float32)  # a put's source: on the heap
    kv_cache = tt.zeros(rt, (requests, PAGES, PAGE_WORDS), dtype=torch.float32)  # used on decode_pe
    page_ready = tt.zeros(rt, (requests, PAGES), dtype=torch.uint64)
    prefix_kv = tt.zeros(rt, (PREFIX_PAGES, PAGE_WORDS), dtype=torch.float32)  # used on the publisher
    prefix_ready = tt.zeros(rt, (1,), dtype=torch.uint64)
    checks = []

    # Hand-off.
    if me != decode_pe:
        prefill_pages[(PAGES,)](prompt(me).to(dev), wk_d, wv_d, staging, kv_cache, page_ready, me, decode_pe,
                                ctx, PAGES=PAGES, **_SIZES)
    else:
        q = torch.stack([query(r) for r in range(requests)])
        out = torch.zeros((requests, D), dtype=torch.float32, device=dev)
        decode_attention[(requests,)](q.to(dev), kv_cache, page_ready, out, scale, ctx, D=D, PAGE=PAGE,
                                      PAGES=PAGES)
        reference = torch.stack([reference_attention(q[r], prompt(r), wk, wv) for r in range(requests)])
        checks.append((f"decoded {requests} request(s) of {PAGES} pages handed off page by page",
                       torch.allclose(out.cpu(), reference, rtol=1e-3, atol=1e-4)))

    # Prefix sharing.
    if me == publisher:
        publish_prefix[(PREFIX_PAGES,)](prefix.to(dev), wk_d, wv_d, prefix_kv, prefix_ready, ctx, **_SIZES)
    else:
        suffix_kv = torch.zeros((SUFFIX_PAGES, PAGE_WORDS), dtype=torch.float32, device=dev)
        project_suffix[(SUFFIX_PAGES,)](suffix(me).to(dev), wk_d, wv_d, suffix_kv, **_SIZES)
        q = query(1000 + me)
        out = torch.zeros(D, dtype=torch.float32, device=dev)
        in_place = rt.transport(publisher) in ("self", "mapped")
        prefix_attention[(1,)](q.to(dev), prefix_kv, prefix_ready, publisher, suffix_kv, out, scale, ctx, D=D,
                               PAGE=PAGE, PREFIX_PAGES=PREFIX_PAGES, SUFFIX_PAGES=SUFFIX_PAGES, IN_PLACE=in_place)
        reference = reference_attention(q, torch.cat([prefix, suffix(me)]), wk, wv)
        how = "read in place on" if in_place else "fetched (get) from"
        checks.append((f"attended over {PREFIX_PAGES} prefix pages {how} PE {publisher} + {SUFFIX_PAGES} own pages",
                       torch.allclose(out.cpu(), reference, rtol=1e-3, atol=1e-4)))
    wait_for_kernels(rt, dev)

    if me != decode_pe:
        checks.insert(0, (f"sent request {me}'s {PAGES} pages to PE {decode_pe}", True))
    if me == publisher:
        checks.append((f"published {PREFIX_PAGES} prefix pages to {n - 1} PE(s)", True))
    ok = all(good for _, good in checks)
    report(rt, f"kv hand-off over {n} PEs: " + "; ".join(what for what, _ in checks), ok)
    rt.barrier()  # peers read prefix_kv in place and may still be writing flags: free after all
    return end(rt, ok, prefix_ready, prefix_kv, page_ready, kv_cache, staging)


if __name__ == "__main__":
    sys.exit(main())
