"""The one pointer translation of tessera.triton and the checks every remote access makes,
mirroring C++ detail::translate, use_proxy and check_in_heap (impl/check.hpp):
- always: the target PE is in [0, n_pes) (else invalid_argument, pe_out_of_range), and its
  heap is mapped here or, for calls that can go through the network proxy, this PE has a
  proxy ring (else transport, pe_not_mapped);
- checked mode (TESSERA_CHECK=1, context flags bit 0): every element the call touches lies in
  this PE's heap (else invalid_argument, outside_heap, naming the span of the elements).
A failed check writes the failure record and suppresses the access; the host reports it at
tessera.triton.check(rt)."""

import triton
import triton.language as tl

from . import _layout as L
from ._failure import record

_INT64_MAX = tl.constexpr(2**63 - 1)


@triton.constexpr_function
def is_scalar(shape):
    return len(shape) == 0


@triton.constexpr_function
def element_bytes(pointer_dtype):
    """Bytes of one element behind a pointer (bool elements take a byte)."""
    return max(pointer_dtype.element_ty.primitive_bitwidth // 8, 1)


@triton.jit
def active_mask(ptr, mask):
    """`mask` as a block of ptr's shape (all true when None); a scalar for a scalar ptr."""
    if mask is None:
        if is_scalar(ptr.shape):
            active = tl.full((), 1, tl.int1)
        else:
            active = tl.full(ptr.shape, 1, tl.int1)
    else:
        if is_scalar(ptr.shape):
            active = mask
        else:
            active = tl.broadcast_to(mask, ptr.shape)
    return active


@triton.jit
def span(ptr, mask):
    """(lowest address, end of the highest element, any element active) over the active
    elements of `ptr`: the bytes a tile access touches."""
    E: tl.constexpr = element_bytes(ptr.dtype)
    addr = tl.cast(ptr, tl.int64)
    active = active_mask(ptr, mask)
    if is_scalar(ptr.shape):
        lo = addr
        hi = addr + E
        any_active = active
    else:
        lo = tl.min(tl.where(active, addr, _INT64_MAX))
        hi = tl.max(tl.where(active, addr + E, 0))
        any_active = tl.max(active.to(tl.int32)) != 0
    return lo, hi, any_active


@triton.jit
def route(ptr, pe, ctx, mask, OP: tl.constexpr, ROLE: tl.constexpr, PROXY_OK: tl.constexpr):
    """Checks an access to the object at local heap pointer `ptr` (scalar or block) on `pe`.
    Returns (remote, direct, proxy): `remote` is `ptr` translated to `pe`'s heap as mapped here
    (base[pe] + (ptr - base[me])); `direct` (scalar) says to access it with loads, stores and
    atomics, `proxy` to push descriptors to this PE's proxy ring instead (only with PROXY_OK).
    Both are false once a check failed (recorded; `remote` is then `ptr` itself)."""
    E: tl.constexpr = element_bytes(ptr.dtype)
    me = tl.load(ctx + L.MY_PE)
    target = tl.cast(pe, tl.int64)
    in_range = (target >= 0) & (target < tl.load(ctx + L.N_PES))
    base = tl.load(ctx + L.HEAP_BASES + target, mask=in_range, other=0)
    base_me = tl.load(ctx + L.HEAP_BASES + me)
    if PROXY_OK:
        reachable = (base != 0) | (tl.load(ctx + L.PROXY) != 0)
    else:
        reachable = base != 0
    inside = tl.full((), 1, tl.int1)
    if (tl.load(ctx + L.FLAGS) & L.CHECKED) != 0:
        lo, hi, any_active = span(ptr, mask)
        end = base_me + tl.load(ctx + L.HEAP_SIZE)
        inside = (not any_active) | ((lo >= base_me) & (hi <= end))
        if not inside:
            record(ctx, L.CODE_INVALID_ARGUMENT, L.KIND_OUTSIDE_HEAP, OP, lo, hi - lo, ROLE, 0,
                   0, 0)
    # The order of C++: heap bounds, then the PE, then whether it is reachable.
    if inside and not in_range:
        record(ctx, L.CODE_INVALID_ARGUMENT, L.KIND_PE_OUT_OF_RANGE, OP, target, 0, 0, 0, 0, 0)
    if inside and in_range and not reachable:
        record(ctx, L.CODE_TRANSPORT, L.KIND_PE_NOT_MAPPED, OP, target, 0, 0, 0, 0, 0)
    ok = inside & in_range & reachable
    direct = ok & (base != 0)
    proxy = ok & (base == 0)
    # Heap bases are page aligned, so the distance is a whole number of elements, and a multiple
    # of 16 of them: telling the compiler keeps the alignment `ptr` has, so tiles still move in
    # vector loads and stores.
    remote = ptr + tl.multiple_of(tl.where(direct, base - base_me, 0) // E, 16)
    return remote, direct, proxy


@triton.jit
def and_mask(mask, ok):
    """`mask` (None, scalar or block) restricted to `ok` (scalar)."""
    if mask is None:
        m = ok
    else:
        m = mask & ok
    return m
