"""Loads, stores and tile copies on other PEs' heaps: translate, load, store, put, get, the
one-element forms p and g, and the ordering calls fence and quiet.

Pointers named `ptr`/`dst` (put) /`src` (get) are local heap pointers (into a symmetric tensor
of this PE) naming the same object on `pe`; the other side of put/get is any local pointer
(a heap address when `pe` is reached through the proxy). Blocks of pointers may have any shape,
strides and mask. Peers whose heap is mapped here (same node) are reached by plain loads and
stores of the translated addresses; peers on other nodes through the network proxy (put and
get only; load, store and translate need a mapped peer)."""

import triton
import triton.language as tl

from . import _layout as L
from . import _proxy
from ._checks import and_mask, is_scalar, route
from ._order import fence_system


@triton.jit
def translate(ptr, pe, ctx):
    """The address on `pe` of the object at local heap pointer `ptr` (scalar or block), as
    mapped in this process: base[pe] + (ptr - base[me]). A PE outside the job or not mapped
    here (or, in checked mode, `ptr` outside the heap) is recorded and `ptr` itself returned."""
    remote, direct, proxy = route(ptr, pe, ctx, None, L.OP_TRANSLATE, L.ROLE_POINTER, False)
    return remote


@triton.jit
def load(ptr, pe, ctx, mask=None, other=None):
    """The values at `ptr` on `pe` (plain loads: they see what `pe` made visible before a
    release this PE acquired). Masked-off elements, and all of them after a failed check, are
    `other`."""
    remote, direct, proxy = route(ptr, pe, ctx, mask, L.OP_LOAD, L.ROLE_POINTER, False)
    return tl.load(remote, mask=and_mask(mask, direct), other=other)


@triton.jit
def store(ptr, value, pe, ctx, mask=None):
    """Writes `value` (broadcast to ptr's shape) to `ptr` on `pe` with plain stores: visible to
    `pe` after a later fence, quiet or signal of this PE."""
    remote, direct, proxy = route(ptr, pe, ctx, mask, L.OP_STORE, L.ROLE_POINTER, False)
    tl.store(remote, value, mask=and_mask(mask, direct))


@triton.jit
def _copy_tile(dst, src, pe, ctx, mask, PUT: tl.constexpr):
    """put (PUT: local `src` to `dst` on `pe`) or get (`src` on `pe` to local `dst`) of one
    tile: plain loads and stores of the translated addresses where `pe` is mapped here, the
    proxy where it is not."""
    if PUT:
        remote, direct, proxy = route(dst, pe, ctx, mask, L.OP_PUT, L.ROLE_DESTINATION_TILE, True)
        to = remote
        frm = src
    else:
        remote, direct, proxy = route(src, pe, ctx, mask, L.OP_GET, L.ROLE_SOURCE_TILE, True)
        to = dst
        frm = remote
    m = and_mask(mask, direct)
    tl.store(to, tl.load(frm, mask=m), mask=m)
    if proxy:
        if PUT:
            _proxy.proxy_put(dst, src, pe, ctx, mask)
        else:
            _proxy.proxy_get(dst, src, pe, ctx, mask)


@triton.jit
def put(dst, src, pe, ctx, mask=None):
    """Copies the tile at local `src` to `dst` on `pe` (same shape; masked-off elements are
    neither read nor written). Visible to `pe` after a later fence, quiet or signal (release)
    of this PE; through the proxy it is delivered before put returns (src reusable)."""
    _copy_tile(dst, src, pe, ctx, mask, True)


@triton.jit
def get(dst, src, pe, ctx, mask=None):
    """Copies the tile at `src` on `pe` into local `dst` (same shape). The values are those
    `pe` made visible before a release this PE acquired; through the proxy, `dst` (a heap
    address) holds them when get returns."""
    _copy_tile(dst, src, pe, ctx, mask, False)


@triton.constexpr_function
def _word_type(pointer_dtype):
    """The integer type the proxy carries one element behind `pointer_dtype` as (32/64-bit
    elements, by their bit pattern), or None when it carries no such element."""
    return {4: tl.int32, 8: tl.int64}.get(pointer_dtype.element_ty.primitive_bitwidth // 8)


@triton.constexpr_function
def _has_word(pointer_dtype):
    return _word_type(pointer_dtype) is not None


@triton.jit
def p(ptr, value, pe, ctx):
    """Writes the one value `value` (cast to ptr's element type) to the element at local heap
    pointer `ptr` (a scalar pointer) on `pe`: a store on a peer mapped here, an atomic-store
    descriptor through the proxy (32/64-bit elements). Visible to `pe` as a put's data is: after
    a later fence, quiet or signal (release) of this PE. Nothing is written after a failed
    check (recorded)."""
    tl.static_assert(is_scalar(ptr.shape), "p writes one element: use store or put for blocks")
    WORDS: tl.constexpr = _has_word(ptr.dtype)
    remote, direct, proxy = route(ptr, pe, ctx, None, L.OP_P, L.ROLE_POINTER, WORDS)
    v = tl.cast(value, ptr.dtype.element_ty)
    tl.store(remote, v, mask=direct)
    if WORDS:
        if proxy:
            W: tl.constexpr = _word_type(ptr.dtype)
            _proxy.proxy_atomic(ptr.to(tl.pointer_type(W), bitcast=True), v.to(W, bitcast=True),
                                0, pe, ctx, None, AMO=_proxy.AMO_STORE, FETCH=False,
                                FENCED=False, OP=L.OP_P)


@triton.jit
def g(ptr, pe, ctx):
    """The one element at local heap pointer `ptr` (a scalar pointer) on `pe`: a load on a peer
    mapped here, a fetching atomic load through the proxy (32/64-bit elements; g waits for the
    value). It is what `pe` made visible before a release this PE acquired. Zero after a failed
    check (recorded)."""
    tl.static_assert(is_scalar(ptr.shape), "g reads one element: use load or get for blocks")
    WORDS: tl.constexpr = _has_word(ptr.dtype)
    remote, direct, proxy = route(ptr, pe, ctx, None, L.OP_G, L.ROLE_POINTER, WORDS)
    value = tl.load(remote, mask=direct, other=0)
    if WORDS:
        if proxy:
            W: tl.constexpr = _word_type(ptr.dtype)
            word = _proxy.proxy_atomic(ptr.to(tl.pointer_type(W), bitcast=True), 0, 0, pe, ctx,
                                       None, AMO=_proxy.AMO_LOAD, FETCH=True, FENCED=False,
                                       OP=L.OP_G)
            value = word.to(ptr.dtype.element_ty, bitcast=True)
    return value


@triton.jit
def fence(ctx):
    """Orders this program's earlier puts, stores and atomics, to every PE, before its later
    ones: a PE that sees a later one also sees the earlier ones. Does not wait for the proxy's
    deliveries (it queues a fence descriptor)."""
    fence_system(ctx, False)
    _proxy.proxy_fence(ctx)


@triton.jit
def quiet(ctx):
    """This program's earlier puts, stores and atomics are complete and visible to their
    targets on return, and this PE's proxy descriptors (from any program) delivered."""
    fence_system(ctx, True)
    _proxy.proxy_quiet(ctx)
