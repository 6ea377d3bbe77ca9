"""Atomics on other PEs' words: atomic_add/sub/xchg/cas/and/or/xor/min/max(ptr, ..., pe, ctx).

`ptr` is a local heap pointer (scalar or block) naming the same words on `pe`; each call returns
the previous values. `sem` ("relaxed", "acquire", "release", "acq_rel") and `scope` ("cta",
"gpu", "sys") are Triton's; the defaults (acq_rel, sys) make an atomic on another PE order this
PE's earlier writes before it (release) and its later reads after it (acquire). A narrower scope
does not order across PEs. Peers on other nodes are reached through the network proxy for
32/64-bit integer words (one descriptor per element; the call waits for the results)."""

import linecache

import triton
import triton.language as tl

from . import _layout as L
from . import _proxy
from ._checks import and_mask, is_scalar, route


@triton.constexpr_function
def _releases(sem):
    return sem in ("release", "acq_rel")


@triton.constexpr_function
def _proxy_word(pointer_dtype):
    """True when the proxy carries atomics on these elements (C++ AtomicWord: 32/64-bit ints)."""
    return str(pointer_dtype.element_ty) in ("int32", "uint32", "int64", "uint64")


@triton.jit
def _rmw(ptr, val, pe, ctx, mask, sem: tl.constexpr, scope: tl.constexpr, OP: tl.constexpr,
         AMO: tl.constexpr):
    PROXY_OK: tl.constexpr = _proxy_word(ptr.dtype)
    remote, direct, proxy = route(ptr, pe, ctx, mask, OP, L.ROLE_POINTER, PROXY_OK)
    m = and_mask(mask, direct)
    if OP == L.OP_ATOMIC_ADD:
        old = tl.atomic_add(remote, val, mask=m, sem=sem, scope=scope)
    elif OP == L.OP_ATOMIC_SUB:
        old = tl.atomic_add(remote, 0 - val, mask=m, sem=sem, scope=scope)
    elif OP == L.OP_ATOMIC_XCHG:
        old = tl.atomic_xchg(remote, val, mask=m, sem=sem, scope=scope)
    elif OP == L.OP_ATOMIC_AND:
        old = tl.atomic_and(remote, val, mask=m, sem=sem, scope=scope)
    elif OP == L.OP_ATOMIC_OR:
        old = tl.atomic_or(remote, val, mask=m, sem=sem, scope=scope)
    elif OP == L.OP_ATOMIC_XOR:
        old = tl.atomic_xor(remote, val, mask=m, sem=sem, scope=scope)
    elif OP == L.OP_ATOMIC_MIN:
        old = tl.atomic_min(remote, val, mask=m, sem=sem, scope=scope)
    else:
        old = tl.atomic_max(remote, val, mask=m, sem=sem, scope=scope)
    if PROXY_OK:
        if proxy:
            if OP == L.OP_ATOMIC_SUB:
                operand = 0 - tl.cast(val, ptr.dtype.element_ty)
            else:
                operand = val
            old = _proxy.proxy_atomic(ptr, operand, 0, pe, ctx, mask, AMO=AMO, FETCH=True,
                                      FENCED=_releases(sem), OP=OP)
    return old


# The read-modify-write atomics: name, Triton op (_rmw's OP), proxy AMO, docstring. Each becomes
# a @triton.jit function of this module with the signature
#   name(ptr, val, pe, ctx, mask=None, sem="acq_rel", scope="sys") -> previous values
# that calls _rmw with its op. Triton compiles (and its interpreter re-runs) a device function
# from its source text, looked up by the function's name, so each is made from its own source
# (_RMW_SOURCE filled in, registered with linecache), not as a closure or a copy of one function.
_RMW_KINDS = (
    ("atomic_add", "OP_ATOMIC_ADD", "AMO_ADD",
     "Adds `val` to the words at `ptr` on `pe`; returns their previous values."),
    ("atomic_sub", "OP_ATOMIC_SUB", "AMO_ADD",
     "Subtracts `val` from the words at `ptr` on `pe` (wrapping); returns the previous values."),
    ("atomic_xchg", "OP_ATOMIC_XCHG", "AMO_XCHG",
     "Replaces the words at `ptr` on `pe` by `val`; returns the previous values."),
    ("atomic_and", "OP_ATOMIC_AND", "AMO_AND",
     "Bitwise-ands `val` into the words at `ptr` on `pe`; returns the previous values."),
    ("atomic_or", "OP_ATOMIC_OR", "AMO_OR",
     "Bitwise-ors `val` into the words at `ptr` on `pe`; returns the previous values."),
    ("atomic_xor", "OP_ATOMIC_XOR", "AMO_XOR",
     "Bitwise-xors `val` into the words at `ptr` on `pe`; returns the previous values."),
    ("atomic_min", "OP_ATOMIC_MIN", "AMO_MIN",
     "Keeps the smaller of the words at `ptr` on `pe` and `val` (signedness of the element\n"
     "    type); returns the previous values."),
    ("atomic_max", "OP_ATOMIC_MAX", "AMO_MAX",
     "Keeps the larger of the words at `ptr` on `pe` and `val`; returns the previous values."),
)

_RMW_SOURCE = '''def {name}(ptr, val, pe, ctx, mask=None, sem: tl.constexpr = "acq_rel",
        scope: tl.constexpr = "sys"):
    """{doc}"""
    return _rmw(ptr, val, pe, ctx, mask, sem, scope, L.{op}, _proxy.{amo})
'''


def _rmw_function(name, op, amo, doc):
    """The @triton.jit function `name` of _RMW_SOURCE, defined in this module."""
    source = _RMW_SOURCE.format(name=name, op=op, amo=amo, doc=doc)
    filename = f"<tessera.triton.atomics.{name}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    defined = {}
    exec(compile(source, filename, "exec"), globals(), defined)
    return triton.jit(defined[name])


for _kind in _RMW_KINDS:
    globals()[_kind[0]] = _rmw_function(*_kind)
del _kind


@triton.jit
def atomic_cas(ptr, cmp, val, pe, ctx, sem: tl.constexpr = "acq_rel",
               scope: tl.constexpr = "sys"):
    """Where the words at `ptr` on `pe` equal `cmp`, replaces them by `val`; returns the
    previous values (equal to `cmp` where the swap happened). Zeros after a failed check."""
    PROXY_OK: tl.constexpr = _proxy_word(ptr.dtype)
    remote, direct, proxy = route(ptr, pe, ctx, None, L.OP_ATOMIC_CAS, L.ROLE_POINTER, PROXY_OK)
    # atomic_cas takes no mask: a failed check skips it.
    if is_scalar(ptr.shape):
        old = tl.cast(0, ptr.dtype.element_ty)
    else:
        old = tl.zeros(ptr.shape, ptr.dtype.element_ty)
    if direct:
        old = tl.atomic_cas(remote, cmp, val, sem=sem, scope=scope)
    if PROXY_OK:
        if proxy:
            old = _proxy.proxy_atomic(ptr, val, cmp, pe, ctx, None, AMO=_proxy.AMO_CAS,
                                      FETCH=True, FENCED=_releases(sem), OP=L.OP_ATOMIC_CAS)
    return old
