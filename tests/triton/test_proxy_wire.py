"""One protocol, two producers: the Triton producer (tessera.triton._proxy) pushes into a ring in
a tensor (proxy_ring.FakeRing, a thread standing in for the proxy), and every descriptor is
compared byte for byte with the C++ encoders of proxy_wire.hpp (tessera._tessera._encode_proxy_*)
and with proxy_ring's encoding written from the header. Also the slot
protocol (wrap-around, collected results, slots freed) and the failures a ring wait reports.

Runs in one process under TRITON_INTERPRET=1; the context tensor is built here, PE 0 of two,
PE 1 not mapped (base 0) so every call goes through the ring."""

import os

os.environ.setdefault("TRITON_INTERPRET", "1")

import pytest  # noqa: E402
import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402

import tessera  # noqa: E402
import tessera.triton as tx  # noqa: E402
from tessera.triton import _layout as L  # noqa: E402
from tessera.triton import _proxy as px  # noqa: E402

import proxy_ring as pr  # noqa: E402

from tessera import _tessera as _CXX  # noqa: E402

HEAP_WORDS = 4096
PEER = 1
# The control page's segment offset as proxy descriptors name it: unrelated to where the fake's
# control page lies, as on a GPU's IPC path.
CONTROL_OFFSET = 6 << 20


class FakeJob:
    """This PE's view of a two-PE job whose peer is on another node: a heap, a control page, a
    failure record and the context tensor naming them and `ring`."""

    def __init__(self, ring, timeout_ns=0):
        self.heap = torch.zeros(HEAP_WORDS, dtype=torch.int64)
        self.control = torch.zeros(512, dtype=torch.int64)
        self.record = torch.zeros(16, dtype=torch.int64)
        words = tessera.TRITON_CONTEXT_WORDS
        ctx = torch.zeros(words["heap_bases"] + 2 * 2, dtype=torch.int64)
        ctx[words["my_pe"]] = 0
        ctx[words["n_pes"]] = 2
        ctx[words["heap_size"]] = HEAP_WORDS * 8
        ctx[words["timeout_ns"]] = timeout_ns
        ctx[words["control_page"]] = self.control.data_ptr()
        ctx[words["proxy"]] = ring.address
        ctx[words["failure_record"]] = self.record.data_ptr()
        ctx[words["control_offset"]] = CONTROL_OFFSET
        ctx[words["heap_bases"]] = self.heap.data_ptr()
        ctx[words["heap_bases"] + PEER] = 0
        ctx[words["heap_bases"] + 2] = self.control.data_ptr()  # the control pages follow
        ctx[words["heap_bases"] + 2 + PEER] = 0
        self.ctx = ctx

    def addr(self, word):
        """Address of heap word `word` (int64 words)."""
        return self.heap.data_ptr() + 8 * word

    def offset(self, word):
        return 8 * word

    def failure(self):
        words = [int(w) & (2**64 - 1) for w in self.record.tolist()]
        return dict(state=words[0], code=words[1], kind=words[2], op=words[3], pe=words[4],
                    args=words[5:11])

    def abort_word(self):
        return int(self.control[L.CONTROL_WORDS["abort_word"]]) & (2**64 - 1)


def cxx(kind, *args):
    """The bytes of the C++ encoder encode_proxy_<kind> (proxy_wire.hpp), through the binding."""
    raw = bytes(getattr(_CXX, "_encode_proxy_" + kind)(*args))
    assert len(raw) == pr.DESCRIPTOR_BYTES
    return raw


def reference(kind, *args):
    return getattr(pr, "encode_" + kind)(*args)


def assert_encodes(seen, expected):
    """`seen` (descriptors the Triton producer published, in ticket order) equals `expected`
    ((kind, args) of an encoder each) byte for byte, seq aside, against both encoders."""
    assert len(seen) == len(expected), [pr.fields(d) for d in seen]
    for i, (raw, (kind, args)) in enumerate(zip(seen, expected)):
        want = reference(kind, *args)
        assert pr.without_seq(raw) == want, (i, pr.fields(raw), pr.fields(want))
        from_cxx = cxx(kind, *args)
        assert pr.without_seq(raw) == from_cxx, (i, pr.fields(raw), pr.fields(from_cxx))


@pytest.fixture
def served():
    """A ring of 4 slots with a consumer, and the job around it."""
    ring = pr.FakeRing(4).serve(result=lambda t, raw: 1000 + t)
    yield ring, FakeJob(ring)
    ring.stop()


# --- kernels: each pushes one kind of descriptor ---

@triton.jit
def _put_tile(ctx, dst, src, out, ROWS: tl.constexpr, COLS: tl.constexpr, DST_STRIDE: tl.constexpr,
              MASK_COLS: tl.constexpr, GET: tl.constexpr):
    r = tl.arange(0, ROWS)[:, None]
    c = tl.arange(0, COLS)[None, :]
    remote = dst + r * DST_STRIDE + c
    local = src + r * COLS + c
    if GET:
        ok = px.proxy_get(local, remote, 1, ctx, mask=c < MASK_COLS)
    else:
        ok = px.proxy_put(remote, local, 1, ctx, mask=c < MASK_COLS)
    tl.store(out, ok)


@triton.jit
def _put_signal_tile(ctx, dst, src, sig, out, value, ROWS: tl.constexpr, COLS: tl.constexpr,
                     DST_STRIDE: tl.constexpr, SIG_OP: tl.constexpr):
    r = tl.arange(0, ROWS)[:, None]
    c = tl.arange(0, COLS)[None, :]
    ok = px.proxy_put_signal(dst + r * DST_STRIDE + c, src + r * COLS + c, sig, value, SIG_OP, 1,
                             ctx)
    tl.store(out, ok)


@triton.jit
def _signal(ctx, sig, out, value, SIG_OP: tl.constexpr, FENCED: tl.constexpr):
    tl.store(out, px.proxy_signal(sig, value, SIG_OP, 1, ctx, FENCED=FENCED))


@triton.jit
def _atomic_block(ctx, ptr, val, cmp, out, N: tl.constexpr, AMO: tl.constexpr,
                  FETCH: tl.constexpr, FENCED: tl.constexpr):
    i = tl.arange(0, N)
    old = px.proxy_atomic(ptr + i, tl.load(val + i), tl.load(cmp + i), 1, ctx, mask=i != 1,
                          AMO=AMO, FETCH=FETCH, FENCED=FENCED)
    tl.store(out + i, old)


@triton.jit
def _atomic_scalar(ctx, ptr, out, value, compare, AMO: tl.constexpr):
    tl.store(out, px.proxy_atomic(ptr, value, compare, 1, ctx, AMO=AMO))


@triton.jit
def _fence_quiet(ctx, out):
    ok = px.proxy_fence(ctx)
    tl.store(out, ok & px.proxy_quiet(ctx))


def _ok():
    return torch.zeros(1, dtype=torch.int32)


# --- encodings ---

@pytest.mark.parametrize("get", [False, True], ids=["put", "get"])
def test_contiguous_tile_is_one_rma_descriptor(served, get):
    ring, job = served
    ok = _ok()
    _put_tile[(1, )](job.ctx, job.heap[0:], job.heap[1024:], ok, ROWS=4, COLS=8, DST_STRIDE=8,
                     MASK_COLS=8, GET=get)
    assert ok.item() == 1
    op = pr.OPS["get" if get else "put"]
    assert_encodes(ring.served_all(), [("rma", (op, PEER, 0, job.addr(1024), 4 * 8 * 8))])
    assert ring.completed == 1


@pytest.mark.parametrize("get", [False, True], ids=["put", "get"])
def test_strided_tile_is_one_descriptor_per_row(served, get):
    ring, job = served
    ok = _ok()
    _put_tile[(1, )](job.ctx, job.heap[64:], job.heap[1024:], ok, ROWS=4, COLS=8, DST_STRIDE=16,
                     MASK_COLS=8, GET=get)
    assert ok.item() == 1
    op = pr.OPS["get" if get else "put"]
    expected = [("rma", (op, PEER, job.offset(64 + 16 * r), job.addr(1024 + 8 * r), 64))
                for r in range(4)]
    assert_encodes(ring.served_all(), expected)


def test_masked_columns_shorten_each_row(served):
    ring, job = served
    ok = _ok()
    _put_tile[(1, )](job.ctx, job.heap[0:], job.heap[1024:], ok, ROWS=2, COLS=8, DST_STRIDE=8,
                     MASK_COLS=3, GET=False)
    expected = [("rma", (pr.OPS["put"], PEER, job.offset(8 * r), job.addr(1024 + 8 * r), 24))
                for r in range(2)]
    assert_encodes(ring.served_all(), expected)


def test_fully_masked_tile_pushes_nothing(served):
    ring, job = served
    ok = _ok()
    _put_tile[(1, )](job.ctx, job.heap[0:], job.heap[1024:], ok, ROWS=2, COLS=8, DST_STRIDE=8,
                     MASK_COLS=0, GET=False)
    assert ok.item() == 1 and ring.reserve == 0 and ring.seen == []


@pytest.mark.parametrize("sig_op", [0, 1], ids=["set", "add"])
def test_contiguous_put_signal_is_one_descriptor(served, sig_op):
    ring, job = served
    ok = _ok()
    _put_signal_tile[(1, )](job.ctx, job.heap[0:], job.heap[1024:], job.heap[2048:], ok, 9,
                            ROWS=2, COLS=8, DST_STRIDE=8, SIG_OP=sig_op)
    assert ok.item() == 1
    expected = ("put_signal", (PEER, 0, job.addr(1024), 128, job.offset(2048), 9, sig_op))
    assert_encodes(ring.served_all(), [expected])


def test_strided_put_signal_is_rows_then_a_fenced_signal(served):
    ring, job = served
    ok = _ok()
    _put_signal_tile[(1, )](job.ctx, job.heap[0:], job.heap[1024:], job.heap[2048:], ok, 3,
                            ROWS=2, COLS=8, DST_STRIDE=32, SIG_OP=1)
    expected = [("rma", (pr.OPS["put"], PEER, job.offset(32 * r), job.addr(1024 + 8 * r), 64))
                for r in range(2)]
    expected.append(("signal", (PEER, job.offset(2048), 3, 1, True)))
    assert_encodes(ring.served_all(), expected)


@pytest.mark.parametrize("fenced", [True, False], ids=["release", "relaxed"])
def test_signal_descriptor(served, fenced):
    ring, job = served
    ok = _ok()
    _signal[(1, )](job.ctx, job.heap[2048:], ok, 2**40 + 5, SIG_OP=0, FENCED=fenced)
    assert_encodes(ring.served_all(), [("signal", (PEER, job.offset(2048), 2**40 + 5, 0, fenced))])


_AMO_CASES = [  # (name, AMO, wire op when fetching, wire amo)
    ("add", px.AMO_ADD, "fetch_atomic", "add"),
    ("and", px.AMO_AND, "fetch_atomic", "and"),
    ("or", px.AMO_OR, "fetch_atomic", "or"),
    ("xor", px.AMO_XOR, "fetch_atomic", "xor"),
    ("min", px.AMO_MIN, "fetch_atomic", "min"),
    ("max", px.AMO_MAX, "fetch_atomic", "max"),
    ("xchg", px.AMO_XCHG, "fetch_atomic", "exchange"),
    ("cas", px.AMO_CAS, "compare_atomic", "exchange"),
]


@pytest.mark.parametrize("dtype,word", [(torch.int32, "i32"), (torch.int64, "i64")])
@pytest.mark.parametrize("name,amo,op,wire_amo", _AMO_CASES, ids=[c[0] for c in _AMO_CASES])
def test_fetching_atomic_block_one_descriptor_per_element_with_results(served, name, amo, op,
                                                                       wire_amo, dtype, word):
    ring, job = served
    heap = job.heap.view(dtype)
    val = torch.tensor([-3, 7, 11, 2**30], dtype=dtype)
    cmp = torch.tensor([5, 6, -7, 8], dtype=dtype)
    out = torch.zeros(4, dtype=dtype)
    _atomic_block[(1, )](job.ctx, heap[16:], val, cmp, out, N=4, AMO=amo.value, FETCH=True,
                         FENCED=True)
    esz = heap.element_size()
    expected = [("atomic", (pr.OPS[op], pr.AMOS[wire_amo], pr.WORDS[word], PEER, 16 * esz + i * esz,
                            int(val[i]), int(cmp[i]) if name == "cas" else 0, True))
                for i in (0, 2, 3)]  # element 1 is masked off
    assert_encodes(ring.served_all(), expected)
    # The consumer answered ticket t with 1000 + t; masked elements read 0.
    assert out.tolist() == [1000, 0, 1001, 1002]
    # Collected slots were freed by the producer for the next lap.
    assert [ring.seq(t) for t in range(3)] == [t + ring.n_slots for t in range(3)]


def test_unfetched_atomic_is_not_collected(served):
    ring, job = served
    val = torch.tensor([1, 2], dtype=torch.int64)
    out = torch.full((2, ), -1, dtype=torch.int64)
    _atomic_block[(1, )](job.ctx, job.heap[16:], val, val, out, N=2, AMO=px.AMO_ADD.value,
                         FETCH=False, FENCED=False)
    expected = ("atomic", (pr.OPS["atomic"], pr.AMOS["add"], pr.WORDS["i64"], PEER, 128, 1, 0,
                           False))
    assert_encodes(ring.served_all(), [expected])
    assert out.tolist() == [0, 0]


@pytest.mark.parametrize("dtype,word", [(torch.int32, "i32"), (torch.int64, "i64")])
def test_scalar_cas_returns_the_word_truncated_to_its_width(dtype, word):
    # A 32-bit result comes back zero-extended; garbage above it must not leak into the value.
    ring = pr.FakeRing(2).serve(result=lambda t, raw: 0xABCD_0000_FFFF_FFFE)
    job = FakeJob(ring)
    try:
        out = torch.zeros(1, dtype=dtype)
        _atomic_scalar[(1, )](job.ctx, job.heap.view(dtype)[4:], out, -1, -2,
                              AMO=px.AMO_CAS.value)
    finally:
        ring.stop()
    esz = torch.empty(0, dtype=dtype).element_size()
    assert_encodes(ring.served_all(), [("atomic", (pr.OPS["compare_atomic"], pr.AMOS["exchange"],
                                           pr.WORDS[word], PEER, 4 * esz, -1, -2, True))])
    assert out.item() == (-2 if dtype == torch.int32 else 0xABCD_0000_FFFF_FFFE - 2**64)


def test_fence_descriptor_names_this_pe_and_quiet_waits_for_it(served):
    ring, job = served
    ok = _ok()
    _fence_quiet[(1, )](job.ctx, ok)
    assert ok.item() == 1
    assert_encodes(ring.served_all(), [("fence", (0, ))])
    assert ring.completed == ring.reserve == 1


@triton.jit
def _world_barrier(ctx):
    tx.barrier(ctx)


def test_world_barrier_names_control_words_by_their_segment_offset(served):
    # PE 0 arrives at its own control page (found through the context's control pages) and at
    # PE 1's through the proxy: its seen word, then its arrival counter, named by the control
    # page's segment offset, not by where the page lies here. PE 1's arrival is pre-set.
    ring, job = served
    arrivals = L.CONTROL_WORDS["barrier_arrivals"]
    seen = L.CONTROL_WORDS["barrier_seen"]
    job.control[arrivals] = 1
    _world_barrier[(1, )](job.ctx)
    assert job.failure()["state"] == 0
    assert int(job.control[arrivals]) == 2 and int(job.control[seen]) == 1
    assert int(job.control[L.CONTROL_WORDS["barrier_entered"]]) == 1
    descriptors = [d for d in ring.served_all() if pr.fields(d)["op"] == pr.OPS["atomic"]]
    assert_encodes(descriptors, [
        ("atomic", (pr.OPS["atomic"], pr.AMOS["store"], pr.WORDS["u64"], PEER,
                    CONTROL_OFFSET + 8 * seen, 1, 0, False)),
        ("atomic", (pr.OPS["atomic"], pr.AMOS["add"], pr.WORDS["u64"], PEER,
                    CONTROL_OFFSET + 8 * arrivals, 1, 0, True)),
    ])
    assert job.heap.count_nonzero().item() == 0


# --- the slot protocol ---

def test_tickets_wrap_around_a_small_ring_in_order(served):
    # 16 row descriptors through 4 slots: each slot is reused once its previous lap is free.
    ring, job = served
    ok = _ok()
    _put_tile[(1, )](job.ctx, job.heap[0:], job.heap[1024:], ok, ROWS=16, COLS=4, DST_STRIDE=8,
                     MASK_COLS=4, GET=False)
    assert ok.item() == 1
    expected = [("rma", (pr.OPS["put"], PEER, job.offset(8 * r), job.addr(1024 + 4 * r), 32))
                for r in range(16)]
    assert_encodes(ring.served_all(), expected)
    assert [pr.fields(d)["seq"] for d in ring.seen] == [t + 1 for t in range(16)]
    assert ring.completed == 16


def test_published_descriptor_waits_in_the_ring_without_a_consumer():
    ring = pr.FakeRing(4)
    job = FakeJob(ring)
    ok = _ok()
    _signal[(1, )](job.ctx, job.heap[8:], ok, 1, SIG_OP=1, FENCED=True)
    assert ok.item() == 1
    (raw, ) = ring.published()
    assert pr.fields(raw)["seq"] == 1  # published: ticket 0 + 1
    assert_encodes([raw], [("signal", (PEER, 64, 1, 1, True))])


# --- failures of the ring waits ---

def test_ring_wait_times_out_with_a_record_and_aborts():
    ring = pr.FakeRing(4)  # nobody serves it
    job = FakeJob(ring, timeout_ns=50_000_000)
    ok = _ok()
    _put_tile[(1, )](job.ctx, job.heap[0:], job.heap[1024:], ok, ROWS=2, COLS=8, DST_STRIDE=8,
                     MASK_COLS=8, GET=False)
    assert ok.item() == 0
    rec = job.failure()
    assert rec["state"] == L.FAILURE_STATES["complete"]
    assert rec["code"] == L.FAILURE_CODES["timeout"]
    assert rec["kind"] == L.FAILURE_KINDS["proxy_timeout"]
    assert rec["op"] == L.FAILURE_OPS["put"]
    assert rec["pe"] == 0
    assert rec["args"][:2] == [0, 1]  # completed seen, awaited (ticket 0 + 1)
    assert job.abort_word() == (1 << 32) | 1


def test_proxy_failure_ends_the_wait_with_its_code():
    ring = pr.FakeRing(4)
    ring.fail(L.FAILURE_CODES["peer_lost"])
    job = FakeJob(ring, timeout_ns=0)  # unbounded: only the failure word can end it
    ok = _ok()
    _fence_quiet[(1, )](job.ctx, ok)
    assert ok.item() == 0
    rec = job.failure()
    assert rec["kind"] == L.FAILURE_KINDS["proxy_failed"]
    assert rec["code"] == L.FAILURE_CODES["peer_lost"]
    assert rec["op"] == L.FAILURE_OPS["quiet"]
    assert rec["args"][0] == ring.address


def test_abort_by_another_pe_ends_the_wait_as_peer_lost():
    ring = pr.FakeRing(4)
    job = FakeJob(ring, timeout_ns=0)
    abort = (1 << 32) | 2  # PE 1 failed
    job.control[L.CONTROL_WORDS["abort_word"]] = abort
    ok = _ok()
    _fence_quiet[(1, )](job.ctx, ok)
    assert ok.item() == 0
    rec = job.failure()
    assert rec["kind"] == L.FAILURE_KINDS["aborted"]
    assert rec["code"] == L.FAILURE_CODES["peer_lost"]
    assert rec["args"][0] == abort


# --- the numbers, against C++ ---

def test_wire_constants_match_cxx():
    wire = _CXX.PROXY_WIRE
    assert wire["header_bytes"] == pr.HEADER_BYTES == 8 * px.RING_SLOTS.value
    assert wire["descriptor_bytes"] == pr.DESCRIPTOR_BYTES == 8 * px.DESCRIPTOR_WORDS.value
    assert wire["ops"] == pr.OPS
    for name, value in pr.OPS.items():
        assert getattr(px, "PROXY_OP_" + name.upper()).value == value
    assert wire["amos"] == pr.AMOS
    assert wire["words"] == pr.WORDS
    assert wire["flags"] == {"collect": px.FLAG_COLLECT.value, "fenced": px.FLAG_FENCED.value}
    ch = wire["channel"]
    assert ch["reserve"] == 8 * px.RING_RESERVE.value
    assert ch["completed"] == 8 * px.RING_COMPLETED.value
    assert ch["failure"] == 4 * px.RING_FAILURE_U32.value
    assert ch["n_slots"] == 4 * px.RING_N_SLOTS_U32.value
    d = wire["descriptor"]
    for name in ("seq", "remote_offset", "local", "bytes", "signal_offset", "value", "compare"):
        const = "DESC_" + ("BYTES" if name == "bytes" else name.upper())
        assert d[name] == 8 * getattr(px, const).value, name
    assert (d["op"], d["amo"], d["word"], d["flags"], d["pe"]) == (8, 9, 10, 11, 12)
