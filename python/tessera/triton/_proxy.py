"""The Triton producer of the network proxy ring.

A peer whose heap this process does not map (another node) is reached through this PE's proxy
thread: Triton code pushes 64-byte descriptors into the ring at context word 7 exactly as C++
device code does (device/tessera/device/proxy_wire.hpp for the layout and encoding,
impl/proxy_producer.hpp for the slot protocol), and the same proxy thread serves both.
tests/triton/pe/test_proxy.py checks the bytes against the C++ encoders.

Slot protocol for ticket t (slot t % n_slots): wait until seq == t (free), write words 1..7,
store seq = t + 1 with release (sys scope). The proxy completes it and either stores
t + n_slots, or for a collected descriptor (fetching atomics) t + 2 with the result in `value`;
the producer then reads the result and frees the slot with seq = t + n_slots.

Pointers: `dst`/`ptr`/`sig` are local heap pointers naming the same object on `pe` (the
descriptor carries their heap offset); `local` pointers (put source, get destination) must be
heap addresses too, since the proxy thread reads and writes them. Blocks of any shape are taken
in row-major order; each run of elements contiguous on both sides becomes one descriptor.
"""

import triton
import triton.language as tl

from . import _clock
from . import _failure
from . import _layout as L

# --- wire values (proxy_wire.hpp; tests compare them with tessera._tessera.PROXY_WIRE) ---
PROXY_OP_PUT: tl.constexpr = tl.constexpr(1)
PROXY_OP_GET: tl.constexpr = tl.constexpr(2)
PROXY_OP_PUT_SIGNAL: tl.constexpr = tl.constexpr(3)
PROXY_OP_SIGNAL: tl.constexpr = tl.constexpr(4)
PROXY_OP_ATOMIC: tl.constexpr = tl.constexpr(5)
PROXY_OP_FETCH_ATOMIC: tl.constexpr = tl.constexpr(6)
PROXY_OP_COMPARE_ATOMIC: tl.constexpr = tl.constexpr(7)
PROXY_OP_FENCE: tl.constexpr = tl.constexpr(8)

AMO_ADD: tl.constexpr = tl.constexpr(0)
AMO_AND: tl.constexpr = tl.constexpr(1)
AMO_OR: tl.constexpr = tl.constexpr(2)
AMO_XOR: tl.constexpr = tl.constexpr(3)
AMO_MIN: tl.constexpr = tl.constexpr(4)
AMO_MAX: tl.constexpr = tl.constexpr(5)
AMO_XCHG: tl.constexpr = tl.constexpr(6)
AMO_LOAD: tl.constexpr = tl.constexpr(7)
AMO_STORE: tl.constexpr = tl.constexpr(8)
# Not a wire value: proxy_atomic's name for compare-and-swap, which goes on the wire as
# compare_atomic with amo exchange (like C++ atomic_compare_exchange).
AMO_CAS: tl.constexpr = tl.constexpr(9)

WORD_I32: tl.constexpr = tl.constexpr(0)
WORD_U32: tl.constexpr = tl.constexpr(1)
WORD_I64: tl.constexpr = tl.constexpr(2)
WORD_U64: tl.constexpr = tl.constexpr(3)

FLAG_COLLECT: tl.constexpr = tl.constexpr(1)
FLAG_FENCED: tl.constexpr = tl.constexpr(2)

# ProxyChannel: uint64 word indices of reserve and completed, uint32 indices of failure and
# n_slots, uint64 index of the first descriptor (kHeaderBytes / 8), uint64 words per descriptor.
RING_RESERVE: tl.constexpr = tl.constexpr(0)
RING_COMPLETED: tl.constexpr = tl.constexpr(8)
RING_FAILURE_U32: tl.constexpr = tl.constexpr(32)
RING_N_SLOTS_U32: tl.constexpr = tl.constexpr(33)
RING_SLOTS: tl.constexpr = tl.constexpr(64)
DESCRIPTOR_WORDS: tl.constexpr = tl.constexpr(8)
# ProxyDescriptor: uint64 word indices of its fields (word 1 packs op, amo, word, flags, pe).
DESC_SEQ: tl.constexpr = tl.constexpr(0)
DESC_HEAD: tl.constexpr = tl.constexpr(1)
DESC_REMOTE_OFFSET: tl.constexpr = tl.constexpr(2)
DESC_LOCAL: tl.constexpr = tl.constexpr(3)
DESC_BYTES: tl.constexpr = tl.constexpr(4)
DESC_SIGNAL_OFFSET: tl.constexpr = tl.constexpr(5)
DESC_VALUE: tl.constexpr = tl.constexpr(6)
DESC_COMPARE: tl.constexpr = tl.constexpr(7)



@triton.constexpr_function
def _is_scalar(shape):
    return len(shape) == 0


@triton.constexpr_function
def _word_of(dtype):
    """The ProxyWord of an atomic on elements of `dtype` (integers only, like C++'s AtomicWord)."""
    words = {"int32": 0, "uint32": 1, "int64": 2, "uint64": 3}
    name = str(dtype)
    assert name in words, (
        f"an atomic through the network proxy needs 32/64-bit integer words, not {name}")
    return words[name]


@triton.constexpr_function
def _bytes_of(dtype):
    return dtype.primitive_bitwidth // 8


@triton.constexpr_function
def _atomic_op(amo, fetch):
    """The wire op of proxy_atomic's AMO: compare-and-swap and fetching forms are collected."""
    if amo == AMO_CAS.value:
        return PROXY_OP_COMPARE_ATOMIC.value
    return PROXY_OP_FETCH_ATOMIC.value if fetch else PROXY_OP_ATOMIC.value


@triton.constexpr_function
def _atomic_amo(amo):
    return AMO_XCHG.value if amo == AMO_CAS.value else amo


@triton.constexpr_function
def _atomic_flags(amo, fetch, fenced):
    """As C++ encode_proxy_atomic: collected unless a plain atomic; fenced for release."""
    collect = FLAG_COLLECT.value if _atomic_op(amo, fetch) != PROXY_OP_ATOMIC.value else 0
    return collect | (FLAG_FENCED.value if fenced else 0)


@triton.jit
def _ring(ctx):
    return tl.load(ctx + L.PROXY).to(tl.pointer_type(tl.uint64), bitcast=True)


@triton.jit
def _n_slots(ring):
    return tl.load(ring.to(tl.pointer_type(tl.uint32), bitcast=True) + RING_N_SLOTS_U32).to(
        tl.uint64)


@triton.jit
def _heap_offset(ptr_bits, ctx):
    """Heap offset of the address `ptr_bits` (int64) of this PE's heap."""
    my_pe = tl.load(ctx + L.MY_PE)
    return (ptr_bits - tl.load(ctx + L.HEAP_BASES + my_pe)).to(tl.uint64, bitcast=True)


@triton.jit
def use_proxy(pe, ctx):
    """True when `pe` is reached through the proxy: its heap is not mapped here and this PE has a
    ring. Call only for `pe` in [0, n_pes)."""
    return (tl.load(ctx + L.HEAP_BASES + pe) == 0) & (tl.load(ctx + L.PROXY) != 0)


@triton.jit
def _reached(seen, value, EXACT: tl.constexpr):
    """1 (int32) when `seen == value` (EXACT) or `seen >= value`, else 0."""
    if EXACT:
        held = seen == value
    else:
        held = seen >= value
    return held.to(tl.int32)


@triton.jit(noinline=True)
def _ring_wait(word, value, EXACT: tl.constexpr, ctx, OP: tl.constexpr):
    """Waits until `*word == value` (EXACT) or `>= value`, bounded by the context's timeout,
    watching the proxy's failure word and the job's abort word every 256 turns, like C++
    ring_wait. Returns 1 once the condition held, 0 after a failure was recorded (or the job is
    aborting); the caller then abandons its descriptor."""
    ring = _ring(ctx)
    timeout_ns = tl.load(ctx + L.TIMEOUT_NS)
    start_ns = _clock.now_ns()
    seen = tl.atomic_load(word, sem="acquire", scope="sys")
    ok = _reached(seen, value, EXACT)
    done = ok
    spins = 0
    while done == 0:
        seen = tl.atomic_load(word, sem="acquire", scope="sys")
        ok = _reached(seen, value, EXACT)
        done = ok
        spins += 1
        _clock.spin_pause()
        if ok == 0 and (spins & 255) == 0:
            failure = tl.atomic_load(ring.to(tl.pointer_type(tl.uint32), bitcast=True) +
                                     RING_FAILURE_U32, sem="acquire", scope="sys")
            if failure != 0:
                _failure.fail(ctx, (failure - 1).to(tl.uint64), L.KIND_PROXY_FAILED, OP,
                              tl.load(ctx + L.PROXY).to(tl.uint64, bitcast=True), 0, 0, 0, 0,
                              0)
                done = 1
            elif _failure.aborting(ctx, OP) != 0:
                done = 1
            elif timeout_ns != 0 and _clock.now_ns() - start_ns > timeout_ns:
                _failure.fail(ctx, L.CODE_TIMEOUT, L.KIND_PROXY_TIMEOUT, OP, seen, value, 0, 0, 0,
                              0)
                done = 1
    return ok


@triton.jit(noinline=True)
def proxy_push(ctx, op, amo, word, flags, pe, remote_offset, local, nbytes, signal_offset, value,
               compare, OP: tl.constexpr):
    """Hands one descriptor (wire values op/amo/word/flags, uint64 fields) to the proxy; returns
    (ticket, ok). Waits, bounded, while the ring is full. ok = 0: a failure was recorded and
    nothing was pushed (the ticket's slot stays unpublished; the job is aborting)."""
    ring = _ring(ctx)
    t = tl.atomic_add(ring + RING_RESERVE, tl.cast(1, tl.uint64), sem="relaxed", scope="sys")
    slot = ring + RING_SLOTS + (t % _n_slots(ring)) * DESCRIPTOR_WORDS
    ok = _ring_wait(slot + DESC_SEQ, t, True, ctx, OP)
    if ok != 0:
        head = (tl.cast(op, tl.uint64) | (tl.cast(amo, tl.uint64) << 8) |
                (tl.cast(word, tl.uint64) << 16) | (tl.cast(flags, tl.uint64) << 24) |
                (tl.cast(pe, tl.int32).to(tl.uint32, bitcast=True).to(tl.uint64) << 32))
        tl.store(slot + DESC_HEAD, head)
        tl.store(slot + DESC_REMOTE_OFFSET, tl.cast(remote_offset, tl.uint64))
        tl.store(slot + DESC_LOCAL, tl.cast(local, tl.uint64))
        tl.store(slot + DESC_BYTES, tl.cast(nbytes, tl.uint64))
        tl.store(slot + DESC_SIGNAL_OFFSET, tl.cast(signal_offset, tl.uint64))
        tl.store(slot + DESC_VALUE, tl.cast(value, tl.uint64))
        tl.store(slot + DESC_COMPARE, tl.cast(compare, tl.uint64))
        # The proxy acquires seq before it reads the other words.
        tl.atomic_store(slot + DESC_SEQ, t + 1, sem="release", scope="sys")
    return t, ok


@triton.jit(noinline=True)
def proxy_wait_completed(ctx, end, OP: tl.constexpr):
    """Waits until every ticket below `end` is complete; returns ok (see _ring_wait)."""
    return _ring_wait(_ring(ctx) + RING_COMPLETED, tl.cast(end, tl.uint64), False, ctx, OP)


@triton.jit(noinline=True)
def proxy_collect(ctx, ticket, OP: tl.constexpr):
    """Waits for collected ticket `ticket`'s result, frees its slot; returns (result bits, ok)."""
    ring = _ring(ctx)
    n_slots = _n_slots(ring)
    slot = ring + RING_SLOTS + (ticket % n_slots) * DESCRIPTOR_WORDS
    ok = _ring_wait(slot + DESC_SEQ, ticket + 2, True, ctx, OP)
    result = tl.cast(0, tl.uint64)
    if ok != 0:
        result = tl.atomic_load(slot + DESC_VALUE, sem="relaxed", scope="sys")
        tl.atomic_store(slot + DESC_SEQ, ticket + n_slots, sem="release", scope="sys")
    return result, ok


@triton.jit
def _flat(x, like):
    """`x` broadcast to the shape of the block `like` and flattened (row-major); for a scalar
    `like`, a block of one element."""
    if _is_scalar(like.shape):
        flat = tl.broadcast_to(x, (1, ))
    else:
        flat = tl.reshape(tl.broadcast_to(x, like.shape), (like.numel, ))
    return flat


@triton.jit
def _flat_mask(mask, like):
    """_flat of `mask` (int1), all elements when it is None."""
    if mask is None:
        active = tl.full((like.numel, ), 1, tl.int1)
    else:
        active = _flat(mask, like)
    return active


@triton.jit
def _push_runs(remote, local, mask, pe, ctx, RMA_OP: tl.constexpr, WAIT: tl.constexpr,
               SIGNAL: tl.constexpr, sig_offset, sig_value, sig_op, OP: tl.constexpr):
    """Pushes one RMA descriptor per run of elements contiguous in both `remote` (local heap
    pointers naming the data on `pe`) and `local`; with SIGNAL, a tile that is one run goes as
    one put_signal descriptor, else the runs are followed by a fenced signal descriptor (as C++
    proxy_put_signal). With WAIT, returns once every descriptor pushed is complete. Returns ok."""
    tl.static_assert(remote.dtype.element_ty == local.dtype.element_ty,
                     "put/get through the proxy: source and destination element types differ")
    N: tl.constexpr = remote.numel
    ESZ: tl.constexpr = _bytes_of(remote.dtype.element_ty)
    r = _flat(remote, remote).to(tl.int64, bitcast=True)
    l = _flat(local, remote).to(tl.int64, bitcast=True)
    active = _flat_mask(mask, remote)
    i = tl.arange(0, N)
    left = active
    n_left = tl.sum(left.to(tl.int32))
    ok = tl.cast(1, tl.int32)
    pushed = tl.cast(0, tl.int32)
    signalled = tl.cast(0, tl.int32)
    last = tl.cast(0, tl.uint64)
    while n_left > 0:
        first = tl.min(tl.where(left, i, N))
        r0 = tl.sum(tl.where(i == first, r, 0))
        l0 = tl.sum(tl.where(i == first, l, 0))
        step = (i - first).to(tl.int64) * ESZ
        breaks = (i > first) & ((~active) | (r - r0 != step) | (l - l0 != step))
        end = tl.min(tl.where(breaks, i, N))
        left = left & (i >= end)
        n_left = tl.sum(left.to(tl.int32))
        nbytes = ((end - first) * ESZ).to(tl.uint64)
        if SIGNAL and pushed == 0 and n_left == 0:
            # The whole tile is one run: one descriptor, delivered then signalled.
            t, ok = proxy_push(ctx, PROXY_OP_PUT_SIGNAL, 0, 0, 0, pe, _heap_offset(r0, ctx), l0,
                               nbytes, sig_offset, sig_value, sig_op, OP)
            signalled = 1
        else:
            t, ok = proxy_push(ctx, RMA_OP, 0, 0, 0, pe, _heap_offset(r0, ctx), l0, nbytes, 0, 0,
                               0, OP)
        last = t
        pushed = 1
        if ok == 0:
            n_left = 0
    if SIGNAL and signalled == 0 and ok != 0:
        t, ok = proxy_push(ctx, PROXY_OP_SIGNAL, 0, 0, FLAG_FENCED, pe, 0, 0, 0, sig_offset,
                           sig_value, sig_op, OP)
        last = t
        pushed = 1
    if WAIT and pushed != 0 and ok != 0:
        ok = proxy_wait_completed(ctx, last + 1, OP)
    return ok


@triton.jit
def proxy_put(dst, src, pe, ctx, mask=None, WAIT: tl.constexpr = True,
              OP: tl.constexpr = L.OP_PUT):
    """Writes the values at local `src` to `dst` on `pe` through the proxy. WAIT: returns once the
    proxy delivered them (src reusable, like C++ put); else they are delivered by proxy_quiet and
    src must not change before. Later descriptors of this PE that are fenced, gets and fetching
    atomics start after it. Returns ok."""
    return _push_runs(dst, src, mask, pe, ctx, PROXY_OP_PUT, WAIT, False, 0, 0, 0, OP)


@triton.jit
def proxy_get(dst, src, pe, ctx, mask=None, WAIT: tl.constexpr = True,
              OP: tl.constexpr = L.OP_GET):
    """Reads `src` on `pe` into local `dst` (a heap address) through the proxy; starts after every
    earlier descriptor of this PE. WAIT: `dst` holds the values on return (else after
    proxy_quiet). Returns ok."""
    return _push_runs(src, dst, mask, pe, ctx, PROXY_OP_GET, WAIT, False, 0, 0, 0, OP)


@triton.jit
def proxy_put_signal(dst, src, sig, value, sig_op, pe, ctx, mask=None, WAIT: tl.constexpr = True,
                     OP: tl.constexpr = L.OP_PUT_SIGNAL):
    """Writes `src` to `dst` on `pe`, then, once it is delivered, sets (sig_op 0) or adds
    (sig_op 1) `value` to the uint64 signal `sig` on `pe`: a PE that acquires the signal sees the
    tile. WAIT: returns once src is reusable. Returns ok."""
    sig_offset = _heap_offset(sig.to(tl.int64, bitcast=True), ctx)
    return _push_runs(dst, src, mask, pe, ctx, PROXY_OP_PUT, WAIT, True, sig_offset,
                      tl.cast(value, tl.uint64), tl.cast(sig_op, tl.uint64), OP)


@triton.jit
def proxy_signal(sig, value, sig_op, pe, ctx, FENCED: tl.constexpr = True,
                 OP: tl.constexpr = L.OP_SIGNAL):
    """Sets (sig_op 0) or adds (sig_op 1) `value` to the uint64 signal `sig` on `pe`. FENCED
    (release): it starts only after every earlier descriptor of this PE completed. Complete at
    proxy_quiet. Returns ok."""
    if FENCED:
        flags: tl.constexpr = FLAG_FENCED
    else:
        flags: tl.constexpr = 0
    sig_offset = _heap_offset(sig.to(tl.int64, bitcast=True), ctx)
    t, ok = proxy_push(ctx, PROXY_OP_SIGNAL, 0, 0, flags, pe, 0, 0, 0, sig_offset,
                       tl.cast(value, tl.uint64), tl.cast(sig_op, tl.uint64), OP)
    return ok


@triton.jit
def _bits(x, ESZ: tl.constexpr):
    """An atomic operand as the descriptor carries it (32-bit words zero-extended)."""
    if ESZ == 4:
        return x.to(tl.uint32, bitcast=True).to(tl.uint64)
    else:
        return x.to(tl.uint64, bitcast=True)


@triton.jit
def proxy_atomic(ptr, val, cmp, pe, ctx, mask=None, AMO: tl.constexpr = 0,
                 FETCH: tl.constexpr = True, FENCED: tl.constexpr = True,
                 OP: tl.constexpr = L.OP_ATOMIC_ADD):
    """Atomic AMO of `val` on each element of `ptr` on `pe` (one descriptor per active element,
    row-major order); AMO_CAS swaps in `val` where the word equals `cmp` (always fetching).
    FETCH: waits for and returns the previous values (dtype of ptr's elements, zeros for masked
    elements); else returns zeros and the atomics are complete at proxy_quiet. FENCED (release):
    each starts only after every earlier descriptor of this PE completed."""
    ELT: tl.constexpr = ptr.dtype.element_ty
    WORD: tl.constexpr = _word_of(ELT)
    ESZ: tl.constexpr = _bytes_of(ELT)
    N: tl.constexpr = ptr.numel
    op: tl.constexpr = _atomic_op(AMO, FETCH)
    amo: tl.constexpr = _atomic_amo(AMO)
    flags: tl.constexpr = _atomic_flags(AMO, FETCH, FENCED)
    if AMO != AMO_CAS:
        cmp = 0  # C++ encodes T{} for every atomic but compare-and-swap
    p = _flat(ptr, ptr).to(tl.int64, bitcast=True)
    v = _bits(_flat(tl.cast(val, ELT), ptr), ESZ)
    c = _bits(_flat(tl.cast(cmp, ELT), ptr), ESZ)
    active = _flat_mask(mask, ptr)
    i = tl.arange(0, N)
    old = tl.zeros((N, ), tl.uint64)
    left = active
    n_left = tl.sum(left.to(tl.int32))
    while n_left > 0:
        first = tl.min(tl.where(left, i, N))
        here = i == first
        t, ok = proxy_push(ctx, op, amo, WORD, flags, pe,
                           _heap_offset(tl.sum(tl.where(here, p, 0)), ctx),
                           0, 0, 0, tl.sum(tl.where(here, v, 0)), tl.sum(tl.where(here, c, 0)),
                           OP)
        left = left & (i != first)
        n_left = tl.sum(left.to(tl.int32))
        if op != PROXY_OP_ATOMIC:
            if ok != 0:
                result, ok = proxy_collect(ctx, t, OP)
                old = tl.where(here, result, old)
        if ok == 0:
            n_left = 0
    if ESZ == 4:
        out = old.to(tl.uint32).to(ELT, bitcast=True)
    else:
        out = old.to(ELT, bitcast=True)
    if _is_scalar(ptr.shape):
        return tl.sum(out)
    else:
        return tl.reshape(out, ptr.shape)


@triton.jit
def proxy_fence(ctx):
    """Later descriptors of this PE start once every earlier one completed (a fence descriptor);
    nothing when this PE has no ring. Returns ok."""
    ok = tl.cast(1, tl.int32)
    if tl.load(ctx + L.PROXY) != 0:
        t, ok = proxy_push(ctx, PROXY_OP_FENCE, 0, 0, 0, tl.load(ctx + L.MY_PE), 0, 0, 0, 0, 0,
                           0, L.OP_FENCE)
    return ok


@triton.jit
def proxy_quiet(ctx, OP: tl.constexpr = L.OP_QUIET):
    """Every descriptor pushed so far by this PE (any program) is complete on return: puts
    delivered, gets landed, atomics done. Nothing when this PE has no ring. Returns ok."""
    ok = tl.cast(1, tl.int32)
    if tl.load(ctx + L.PROXY) != 0:
        ring = _ring(ctx)
        end = tl.atomic_load(ring + RING_RESERVE, sem="acquire", scope="sys")
        ok = proxy_wait_completed(ctx, end, OP)
    return ok
