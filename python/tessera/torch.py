"""tessera.torch: symmetric torch tensors and the ops as torch custom ops (namespace ``tessera``).

    t = tessera.torch.empty(rt, (m, k), dtype=torch.bfloat16)    # a torch.Tensor on the heap
    c = tessera.torch.ag_gemm(rt, a_shard, b)                     # torch.ops.tessera.ag_gemm
    tessera.torch.all_gather(rt, send, recv)                      # torch.ops.tessera.all_gather_
    tessera.torch.all_reduce(rt, send, recv, op="sum")            # torch.ops.tessera.all_reduce_
    tessera.torch.reduce_scatter / all_to_all / all_to_all_v / broadcast   # tessera::<name>_
    y = tessera.torch.all_reduce_rmsnorm(rt, x, residual, weight)  # tessera::all_reduce_rmsnorm
    c = tessera.torch.gemm_ar(rt, a, b, pattern="auto")           # tessera::gemm_ar (and gemm_as)
    c = tessera.torch.gemm_rs(rt, a, b)                           # torch.ops.tessera.gemm_rs
    ex, counts = tessera.torch.moe_dispatch(rt, x, idx, w, num_experts=E)  # tessera::moe_dispatch
    y = tessera.torch.moe_combine(rt, expert_out, w, num_experts=E)       # tessera::moe_combine
    y = tessera.torch.all_gather_rows(rt, x)  # functional: reduce_scatter_rows, all_reduce_sum,
                                              # broadcast_from, all_to_all_rows, all_to_all_v_rows

The custom ops have fake (meta) implementations, so they trace into ``torch.compile`` graphs.
A custom op cannot take a Runtime or a Team, so it takes their handles (``handle(rt)``,
``handle(team)``; team handle 0 is every PE); the functions here pass them. Each op completes
before it returns (it synchronizes the stream). Every op but the in-place collectives
(``<name>_``, which mutate their recv) has a backward; see "Training (autograd)" in docs/python.md.
"""

from __future__ import annotations

import math
from typing import Optional

import torch as _torch

from . import _tessera
from . import ops as _ops

_RUNTIMES: dict[int, object] = {}
_TEAMS: dict[int, object] = {}  # handle -> tessera.Team (0, every PE, is not registered)
_AG_GEMMS: dict[tuple, object] = {}  # op workspaces (AgGemm, GemmRs, MoeBuffer) by shape
_MOE_HANDLES: dict[tuple, object] = {}  # MoeBuffer key -> its last dispatch's MoeHandle
_MOE_ROUTES: dict[tuple, tuple] = {}  # MoeBuffer key -> (topk_idx, topk_weight) of that dispatch
_MOE_UNIT: dict[tuple, tuple] = {}  # MoeBuffer key -> (routes, handle): a backward's unit dispatch
_ARRAYS: dict[int, object] = {}  # data_ptr -> tessera.Array of tensors made by empty/zeros


def handle(rt) -> int:
    """The integer the custom ops know `rt` (a Runtime) or a tessera.Team by (registered on first
    use); ``handle(None)`` is 0, the team of every PE."""
    if rt is None:
        return 0
    key = id(rt)
    if isinstance(rt, _tessera.Team):
        _TEAMS[key] = rt
    else:
        _RUNTIMES[key] = rt
    return key


def _team(key: int):
    if key == 0:
        return None
    team = _TEAMS.get(key)
    if team is None:
        raise RuntimeError(f"tessera.torch: team handle {key} is unknown (pass handle(team))")
    return team


def _runtime(key: int):
    rt = _RUNTIMES.get(key)
    if rt is None or not rt.valid:
        raise RuntimeError(f"tessera.torch: runtime handle {key} is unknown or finalized")
    return rt


def _dtype_name(dtype) -> str:
    return str(dtype).replace("torch.", "")


def empty(rt, shape, dtype=_torch.bfloat16) -> _torch.Tensor:
    """Collective: a torch.Tensor on the symmetric heap (a zero-copy view of rt.empty)."""
    a = rt.empty(shape, _dtype_name(dtype))
    t = _torch.from_dlpack(a)
    _ARRAYS[t.data_ptr()] = a
    return t


def zeros(rt, shape, dtype=_torch.bfloat16) -> _torch.Tensor:
    """Collective: like empty(), zero-filled (every PE's copy is zeroed before any returns)."""
    a = rt.zeros(shape, _dtype_name(dtype))
    t = _torch.from_dlpack(a)
    _ARRAYS[t.data_ptr()] = a
    return t


def free(tensor: _torch.Tensor) -> None:
    """Collective: frees the heap block of a tensor made by empty()/zeros()."""
    a = _ARRAYS.pop(tensor.data_ptr(), None)
    if a is None:
        raise ValueError("tessera.torch.free: the tensor was not made by tessera.torch.empty/zeros")
    a.free()


@_torch.library.custom_op("tessera::all_gather_", mutates_args=("recv",))
def _all_gather(send: _torch.Tensor, recv: _torch.Tensor, rt_handle: int) -> None:
    rt = _runtime(rt_handle)
    _ops.all_gather(rt, send.detach(), recv.detach())
    rt.synchronize()


@_all_gather.register_fake
def _(send, recv, rt_handle):
    return None


def _in_place_reduction(name: str, run):
    """Registers tessera::<name>: the collective reduction `run` (a tessera.ops function taking
    op, algo and team) of send into recv, which it mutates."""

    def reduction(send: _torch.Tensor, recv: _torch.Tensor, rt_handle: int, op: str = "sum",
                  algo: str = "auto", team: int = 0) -> None:
        rt = _runtime(rt_handle)
        run(rt, send.detach(), recv.detach(), op=op, algo=algo, team=_team(team))
        rt.synchronize()

    custom = _torch.library.custom_op(f"tessera::{name}", reduction, mutates_args=("recv",))
    custom.register_fake(lambda send, recv, rt_handle, op="sum", algo="auto", team=0: None)
    return custom


_all_reduce = _in_place_reduction("all_reduce_", _ops.all_reduce)


def _fused_gemm(kind, make, rt_handle, shape, dtype, pattern, direction, comm_blocks):
    """The cached op of this kind, shape and options (collective to make: every PE makes the same
    calls, so they build it together)."""
    key = (kind, rt_handle, *shape, dtype, pattern, direction, comm_blocks)
    op = _AG_GEMMS.get(key)
    if op is None:
        op = _AG_GEMMS[key] = make(_runtime(rt_handle), *shape, dtype, pattern=pattern,
                                   direction=direction, comm_blocks=comm_blocks)
    return op


def _run_gemm(op, rt_handle, a, b, c_shape):
    c = _torch.empty(c_shape, dtype=_torch.float32)
    op.run(a.detach(), b.detach(), c)
    _runtime(rt_handle).synchronize()
    return c


@_torch.library.custom_op("tessera::ag_gemm", mutates_args=())
def _ag_gemm(a_shard: _torch.Tensor, b: _torch.Tensor, rt_handle: int, pattern: str = "auto",
             direction: str = "auto", comm_blocks: int = 1) -> _torch.Tensor:
    rows, k = a_shard.shape
    m = rows * _runtime(rt_handle).n_pes
    op = _fused_gemm("ag_gemm", _ops.AgGemm, rt_handle, (m, b.shape[1], k), _dtype_name(a_shard.dtype),
                     pattern, direction, comm_blocks)
    return _run_gemm(op, rt_handle, a_shard, b, (m, b.shape[1]))


@_ag_gemm.register_fake
def _(a_shard, b, rt_handle, pattern="auto", direction="auto", comm_blocks=1):
    # The world size is not in the op's arguments: a fake tensor's rows come from the runtime.
    n_pes = _runtime(rt_handle).n_pes
    return a_shard.new_empty((a_shard.shape[0] * n_pes, b.shape[1]), dtype=_torch.float32)


def _gemm_then_collective(kind: str, make, c_shape):
    """Registers tessera::<kind>: the fused op `make` (a tessera.ops class) of this PE's GEMM of
    a (m x k) and b (k x n), then a collective of its result; c_shape(a, b, rt_handle) is the
    output's shape."""

    def gemm(a: _torch.Tensor, b: _torch.Tensor, rt_handle: int, pattern: str = "auto",
             direction: str = "auto", comm_blocks: int = 1) -> _torch.Tensor:
        m, k = a.shape
        op = _fused_gemm(kind, make, rt_handle, (m, b.shape[1], k), _dtype_name(a.dtype), pattern, direction,
                         comm_blocks)
        return _run_gemm(op, rt_handle, a, b, c_shape(a, b, rt_handle))

    def fake(a, b, rt_handle, pattern="auto", direction="auto", comm_blocks=1):
        return a.new_empty(c_shape(a, b, rt_handle), dtype=_torch.float32)

    custom = _torch.library.custom_op(f"tessera::{kind}", gemm, mutates_args=())
    custom.register_fake(fake)
    return custom


# C's rows reduce-scattered over PEs (gemm_rs), C all-reduced (gemm_ar), C's column blocks
# all-gathered (gemm_as).
_gemm_rs = _gemm_then_collective("gemm_rs", _ops.GemmRs,
                                 lambda a, b, rt_handle: (a.shape[0] // _runtime(rt_handle).n_pes, b.shape[1]))
_gemm_ar = _gemm_then_collective("gemm_ar", _ops.GemmAr, lambda a, b, rt_handle: (a.shape[0], b.shape[1]))
_gemm_as = _gemm_then_collective("gemm_as", _ops.GemmAs,
                                 lambda a, b, rt_handle: (a.shape[0], b.shape[1] * _runtime(rt_handle).n_pes))


# ---- functional collectives: new tensors out, any memory in, with autograd ----------------------
# x may be ordinary memory; the result lands in a heap staging buffer cached per shape and dtype
# (collective to make: every PE calls with the same shapes in the same order; tt.release frees
# them) and is copied out. They work over every PE. They take any dtype of 2, 4 or 8 bytes a value:
# those the reduction kernels lack (float64, complex64, int16) move as bits of that width, and
# their sums are added up here after the move, in PE order (the same bits on every PE).

_BITS = {8: _torch.int64, 4: _torch.int32, 2: _torch.float16}  # a dtype moved as these bits
_COLLECTIVE_DTYPES = (_torch.float32, _torch.bfloat16, _torch.float16, _torch.int32, _torch.int64)


def _as_moved(x: _torch.Tensor) -> _torch.Tensor:
    """x contiguous, as a dtype the collectives move (its own, or an integer of its width)."""
    x = x.detach().contiguous()
    if x.dtype in _COLLECTIVE_DTYPES:
        return x
    bits = _BITS.get(x.element_size())
    if bits is None:
        raise TypeError(f"tessera.torch: dtype {x.dtype} cannot be moved (2, 4 or 8 bytes a value)")
    return x.view(bits)


def _staged(kind: str, rt_handle: int, shape, dtype) -> _torch.Tensor:
    """The heap staging tensor of this op, shape and dtype (made on first use, collectively)."""
    key = (kind, rt_handle, tuple(shape), _dtype_name(dtype))
    staging = _AG_GEMMS.get(key)
    if staging is None:
        staging = _AG_GEMMS[key] = _runtime(rt_handle).empty(tuple(shape), _dtype_name(dtype))
    return _torch.from_dlpack(staging)


def _rows_of(x: _torch.Tensor, n_pes: int, op: str) -> int:
    if x.dim() == 0 or x.shape[0] % n_pes != 0:
        raise ValueError(f"tessera::{op}: x is {tuple(x.shape)}; its rows must split into {n_pes} "
                         "equal blocks (one per PE)")
    return x.shape[0] // n_pes


@_torch.library.custom_op("tessera::all_gather_rows", mutates_args=())
def _all_gather_rows(x: _torch.Tensor, rt_handle: int) -> _torch.Tensor:
    """Every PE's x stacked by rows, (n_pes * rows, *rest)."""
    rt = _runtime(rt_handle)
    send = _as_moved(x)
    recv = _staged("all_gather_rows", rt_handle, (rt.n_pes, *x.shape), send.dtype)
    _ops.all_gather(rt, send, recv)
    rt.synchronize()
    return recv.view(x.dtype).reshape(rt.n_pes * x.shape[0], *x.shape[1:]).clone()


@_all_gather_rows.register_fake
def _(x, rt_handle):
    return x.new_empty((x.shape[0] * _runtime(rt_handle).n_pes, *x.shape[1:]))


@_torch.library.custom_op("tessera::reduce_scatter_rows", mutates_args=())
def _reduce_scatter_rows(x: _torch.Tensor, rt_handle: int) -> _torch.Tensor:
    """Block p (of n_pes equal row blocks) of the sum over PEs of x, on PE p."""
    rt = _runtime(rt_handle)
    rows = _rows_of(x, rt.n_pes, "reduce_scatter_rows")
    if x.dtype not in _COLLECTIVE_DTYPES:  # every PE's block for me, then their sum
        return _all_to_all_rows(x, rt_handle).reshape(rt.n_pes, rows, *x.shape[1:]).sum(0)
    recv = _staged("reduce_scatter_rows", rt_handle, (rows, *x.shape[1:]), x.dtype)
    _ops.reduce_scatter(rt, x.detach().contiguous().view(-1), recv.view(-1))
    rt.synchronize()
    return recv.clone()


@_reduce_scatter_rows.register_fake
def _(x, rt_handle):
    return x.new_empty((x.shape[0] // _runtime(rt_handle).n_pes, *x.shape[1:]))


@_torch.library.custom_op("tessera::all_reduce_sum", mutates_args=())
def _all_reduce_sum(x: _torch.Tensor, rt_handle: int, team: int = 0) -> _torch.Tensor:
    """The sum over the team's members (team handle 0: every PE) of x, on every member."""
    rt = _runtime(rt_handle)
    if x.dtype not in _COLLECTIVE_DTYPES:
        if team != 0:
            raise TypeError(f"tessera::all_reduce_sum: {x.dtype} is summed on every PE only (team 0)")
        return _all_gather_rows(x.reshape(1, *x.shape), rt_handle).sum(0)
    recv = _staged(f"all_reduce_sum.{team}", rt_handle, x.shape, x.dtype)
    _ops.all_reduce(rt, x.detach().contiguous().view(-1), recv.view(-1), team=_team(team))
    rt.synchronize()
    return recv.clone()


@_all_reduce_sum.register_fake
def _(x, rt_handle, team=0):
    return _torch.empty_like(x)


@_torch.library.custom_op("tessera::broadcast_from", mutates_args=())
def _broadcast_from(x: _torch.Tensor, rt_handle: int, root: int = 0) -> _torch.Tensor:
    """PE root's x on every PE (every PE passes an x of the same shape; only root's is read)."""
    rt = _runtime(rt_handle)
    send = _as_moved(x)
    recv = _staged("broadcast_from", rt_handle, x.shape, send.dtype)
    _ops.broadcast(rt, send.view(-1), recv.view(-1), root=root)
    rt.synchronize()
    return recv.view(x.dtype).clone()


@_broadcast_from.register_fake
def _(x, rt_handle, root=0):
    return _torch.empty_like(x)


@_torch.library.custom_op("tessera::all_to_all_rows", mutates_args=())
def _all_to_all_rows(x: _torch.Tensor, rt_handle: int) -> _torch.Tensor:
    """Row block q of x goes to PE q; block s of the result came from PE s."""
    rt = _runtime(rt_handle)
    _rows_of(x, rt.n_pes, "all_to_all_rows")
    send = _as_moved(x)
    recv = _staged("all_to_all_rows", rt_handle, x.shape, send.dtype)
    _ops.all_to_all(rt, send.view(-1), recv.view(-1))
    rt.synchronize()
    return recv.view(x.dtype).clone()


@_all_to_all_rows.register_fake
def _(x, rt_handle):
    return _torch.empty_like(x)


@_torch.library.custom_op("tessera::all_to_all_v_rows", mutates_args=())
def _all_to_all_v_rows(x: _torch.Tensor, send_rows: _torch.Tensor,
                       rt_handle: int) -> tuple[_torch.Tensor, _torch.Tensor]:
    """send_rows[q] rows of x (packed in PE order) go to PE q: the rows received, packed in source
    order, and recv_rows (int64, one per PE: how many came from each)."""
    rt = _runtime(rt_handle)
    p = rt.n_pes
    counts = send_rows.detach().to(_torch.int64).contiguous()
    if counts.shape != (p,) or bool((counts < 0).any()) or int(counts.sum()) != x.shape[0]:
        raise ValueError(f"tessera::all_to_all_v_rows: send_rows must be {p} counts >= 0 summing to "
                         f"x's {x.shape[0]} rows, got {send_rows.tolist()}")
    row = math.prod(x.shape[1:])
    # The counts first (all_to_all of one count per peer), then the largest total anywhere sizes
    # the symmetric staging buffer (a power of two of rows, so a few sizes cover a training run).
    sent = _staged("all_to_all_v_rows.counts", rt_handle, (p,), _torch.int64)
    got = _staged("all_to_all_v_rows.got", rt_handle, (p,), _torch.int64)
    sent.copy_(counts)
    _ops.all_to_all(rt, sent, got)
    rt.synchronize()
    recv_rows = got.clone()
    most = _staged("all_to_all_v_rows.most", rt_handle, (1,), _torch.int64)
    most.fill_(int(recv_rows.sum()))
    _ops.all_reduce(rt, most, most, op="max")
    rt.synchronize()
    capacity = 1 << max(int(most.item()) - 1, 0).bit_length()
    send = _as_moved(x)
    recv = _staged("all_to_all_v_rows", rt_handle, (capacity * row,), send.dtype)
    meta = _staged("all_to_all_v_rows.meta", rt_handle, (3, p), _torch.int64)
    meta[0].copy_(counts * row)
    _ops.all_to_all_v(rt, send.view(-1), meta[0], recv, meta[1], meta[2])
    rt.synchronize()
    n = int(recv_rows.sum())
    return recv[:n * row].view(x.dtype).reshape(n, *x.shape[1:]).clone(), recv_rows


@_all_to_all_v_rows.register_fake
def _(x, send_rows, rt_handle):
    rows = _torch.library.get_ctx().new_dynamic_size()  # how many rows arrive depends on the data
    return (x.new_empty((rows, *x.shape[1:])),
            send_rows.new_empty((_runtime(rt_handle).n_pes,), dtype=_torch.int64))


# ---- their autograd ------------------------------------------------------------------------------
# Each PE's output is its own tensor with its own gradient (a replicated output's copies too), and
# each backward gives the gradient of this PE's input of the sum over PEs of their losses: the
# adjoint of the collective as a linear map of every PE's data. So all_gather <-> reduce_scatter,
# all_reduce -> all_reduce, broadcast -> a sum to the root, all_to_all(_v) -> the exchange back.
# A job whose PEs all compute the same loss from a replicated output counts it n_pes times:
# divide that loss by n_pes.


def _save_handle(ctx, inputs, output):
    ctx.rt_handle = inputs[1]


def _all_gather_rows_backward(ctx, g):
    return _torch.ops.tessera.reduce_scatter_rows(g.contiguous(), ctx.rt_handle), None


def _reduce_scatter_rows_backward(ctx, g):
    return _torch.ops.tessera.all_gather_rows(g.contiguous(), ctx.rt_handle), None


def _save_team(ctx, inputs, output):
    ctx.rt_handle, ctx.team = inputs[1], inputs[2]


def _all_reduce_sum_backward(ctx, g):
    return _torch.ops.tessera.all_reduce_sum(g.contiguous(), ctx.rt_handle, ctx.team), None, None


def _all_to_all_rows_backward(ctx, g):
    return _torch.ops.tessera.all_to_all_rows(g.contiguous(), ctx.rt_handle), None


def _save_broadcast(ctx, inputs, output):
    ctx.rt_handle, ctx.root = inputs[1], inputs[2]


def _broadcast_from_backward(ctx, g):
    total = _torch.ops.tessera.all_reduce_sum(g.contiguous(), ctx.rt_handle, 0)
    mine = _runtime(ctx.rt_handle).pe == ctx.root
    return (total if mine else _torch.zeros_like(total)), None, None


def _save_all_to_all_v(ctx, inputs, output):
    ctx.rt_handle = inputs[2]
    ctx.recv_rows = output[1]


def _all_to_all_v_rows_backward(ctx, g, _g_counts):
    back, _ = _torch.ops.tessera.all_to_all_v_rows(g.contiguous(), ctx.recv_rows, ctx.rt_handle)
    return back, None, None


_all_gather_rows.register_autograd(_all_gather_rows_backward, setup_context=_save_handle)
_reduce_scatter_rows.register_autograd(_reduce_scatter_rows_backward, setup_context=_save_handle)
_all_reduce_sum.register_autograd(_all_reduce_sum_backward, setup_context=_save_team)
_all_to_all_rows.register_autograd(_all_to_all_rows_backward, setup_context=_save_handle)
_broadcast_from.register_autograd(_broadcast_from_backward, setup_context=_save_broadcast)
_all_to_all_v_rows.register_autograd(_all_to_all_v_rows_backward, setup_context=_save_all_to_all_v)


# ---- autograd of the fused GEMMs ----------------------------------------------------------------
# The functional collectives' convention (above): each PE's output has its own gradient, and the
# backward gives this PE's inputs' gradient of the sum over PEs of their losses. The backwards
# communicate through Tessera's fused ops (ag_gemm <-> gemm_rs) where the forward's dual is one,
# with the "auto" pattern whatever the forward used; gradients come back in the inputs' dtypes
# (the GEMMs run in fp32).


def _save_gemm_inputs(ctx, inputs, output):
    a, b, rt_handle = inputs[0], inputs[1], inputs[2]
    ctx.save_for_backward(a, b)
    ctx.rt_handle = rt_handle


def _fp32_t(x: _torch.Tensor) -> _torch.Tensor:
    return x.detach().t().to(_torch.float32).contiguous()


def _gemm_grads(ctx, grad_a, grad_b):
    """A fused GEMM's backward result for (a, b, rt_handle, pattern, direction, comm_blocks):
    grad_a() and grad_b(), in that order (they may communicate: every PE calls the same), each
    only when its input needs a gradient."""
    return (grad_a() if ctx.needs_input_grad[0] else None, grad_b() if ctx.needs_input_grad[1] else None,
            None, None, None, None)


def _ag_gemm_backward(ctx, grad_c):
    # C = all_gather(A) @ B: dA_shard = reduce_scatter(dC @ B^T) (gemm_rs); dB = all_gather(A)^T @ dC.
    a_shard, b = ctx.saved_tensors
    g = grad_c.contiguous()

    def grad_b():
        a_full = _torch.ops.tessera.all_gather_rows(a_shard.detach().contiguous(), ctx.rt_handle)
        return (a_full.t().to(_torch.float32) @ g).to(b.dtype)

    return _gemm_grads(ctx, lambda: _torch.ops.tessera.gemm_rs(g, _fp32_t(b), ctx.rt_handle).to(a_shard.dtype),
                       grad_b)


def _gemm_rs_backward(ctx, grad_c):
    # C_shard = reduce_scatter(A @ B): dA = all_gather(dC) @ B^T (ag_gemm); dB = A^T @ all_gather(dC).
    a, b = ctx.saved_tensors
    g = grad_c.contiguous()
    return _gemm_grads(ctx, lambda: _torch.ops.tessera.ag_gemm(g, _fp32_t(b), ctx.rt_handle).to(a.dtype),
                       lambda: (_fp32_t(a) @ _torch.ops.tessera.all_gather_rows(g, ctx.rt_handle)).to(b.dtype))


def _gemm_ar_backward(ctx, grad_c):
    # C = sum over PEs of A_p @ B_p on every PE: dC = sum over PEs of their dC (all_reduce_sum),
    # then dA_p = dC @ B_p^T, dB_p = A_p^T @ dC.
    a, b = ctx.saved_tensors
    g = _torch.ops.tessera.all_reduce_sum(grad_c.contiguous(), ctx.rt_handle, 0)
    return _gemm_grads(ctx, lambda: (g @ _fp32_t(b)).to(a.dtype), lambda: (_fp32_t(a) @ g).to(b.dtype))


def _gemm_as_backward(ctx, grad_c):
    # C = [A_0 @ B_0 ... A_{P-1} @ B_{P-1}] on every PE: this PE's columns of the sum over PEs of
    # dC (a reduce-scatter of the column blocks), then dA_p = dC_p @ B_p^T, dB_p = A_p^T @ dC_p.
    a, b = ctx.saved_tensors
    g_mine = _torch.ops.tessera.reduce_scatter_rows(grad_c.t().contiguous(), ctx.rt_handle).t()
    return _gemm_grads(ctx, lambda: (g_mine @ _fp32_t(b)).to(a.dtype), lambda: (_fp32_t(a) @ g_mine).to(b.dtype))


_ag_gemm.register_autograd(_ag_gemm_backward, setup_context=_save_gemm_inputs)
_gemm_rs.register_autograd(_gemm_rs_backward, setup_context=_save_gemm_inputs)
_gemm_ar.register_autograd(_gemm_ar_backward, setup_context=_save_gemm_inputs)
_gemm_as.register_autograd(_gemm_as_backward, setup_context=_save_gemm_inputs)


_reduce_scatter = _in_place_reduction("reduce_scatter_", _ops.reduce_scatter)


@_torch.library.custom_op("tessera::all_to_all_", mutates_args=("recv",))
def _all_to_all(send: _torch.Tensor, recv: _torch.Tensor, rt_handle: int, team: int = 0) -> None:
    rt = _runtime(rt_handle)
    _ops.all_to_all(rt, send.detach(), recv.detach(), team=_team(team))
    rt.synchronize()


@_all_to_all.register_fake
def _(send, recv, rt_handle, team=0):
    return None


@_torch.library.custom_op("tessera::all_to_all_v_", mutates_args=("recv", "recv_counts", "recv_offsets"))
def _all_to_all_v(send: _torch.Tensor, send_counts: _torch.Tensor, recv: _torch.Tensor,
                  recv_counts: _torch.Tensor, recv_offsets: _torch.Tensor, rt_handle: int,
                  team: int = 0) -> None:
    rt = _runtime(rt_handle)
    _ops.all_to_all_v(rt, send.detach(), send_counts.detach(), recv.detach(), recv_counts.detach(),
                      recv_offsets.detach(), team=_team(team))
    rt.synchronize()


@_all_to_all_v.register_fake
def _(send, send_counts, recv, recv_counts, recv_offsets, rt_handle, team=0):
    return None


@_torch.library.custom_op("tessera::broadcast_", mutates_args=("recv",))
def _broadcast(send: Optional[_torch.Tensor], recv: _torch.Tensor, rt_handle: int, root: int = 0,
               team: int = 0) -> None:
    rt = _runtime(rt_handle)
    _ops.broadcast(rt, None if send is None else send.detach(), recv.detach(), root=root, team=_team(team))
    rt.synchronize()


@_broadcast.register_fake
def _(send, recv, rt_handle, root=0, team=0):
    return None


@_torch.library.custom_op("tessera::all_reduce_rmsnorm", mutates_args=())
def _all_reduce_rmsnorm(x: _torch.Tensor, residual: _torch.Tensor, weight: _torch.Tensor, rt_handle: int,
                        eps: float = 1e-6, pattern: str = "auto", team: int = 0) -> _torch.Tensor:
    rt = _runtime(rt_handle)
    y = _torch.empty_like(x)
    _ops.all_reduce_rmsnorm(rt, x.detach(), residual.detach(), weight.detach(), y, eps=eps, pattern=pattern,
                            team=_team(team))
    rt.synchronize()
    return y


@_all_reduce_rmsnorm.register_fake
def _(x, residual, weight, rt_handle, eps=1e-6, pattern="auto", team=0):
    return _torch.empty_like(x)


def _save_rmsnorm(ctx, inputs, output):
    x, residual, weight, rt_handle, eps, _pattern, team = inputs
    ctx.save_for_backward(x, residual, weight)
    ctx.rt_handle, ctx.eps, ctx.team = rt_handle, eps, team


def _all_reduce_rmsnorm_backward(ctx, grad_y):
    # y_p = v_p * r_p * w_p with v_p = sum_q x_q + residual_p and r_p = 1 / sqrt(mean(v_p^2) + eps)
    # (row by row). The sum v is not kept by the fused forward: it is recomputed (one all_reduce_sum
    # more, no extra memory). dv = r * (dy w - n * mean(dy w n)) with n = v r; d residual = dv,
    # dx = the sum over PEs of their dv (the all-reduce's adjoint), dw = the column sums of dy n.
    x, residual, weight = ctx.saved_tensors
    x32 = x.detach().to(_torch.float32)
    v = _torch.ops.tessera.all_reduce_sum(x32.contiguous(), ctx.rt_handle, ctx.team)
    v = v + residual.detach().to(_torch.float32)
    r = _torch.rsqrt(v.pow(2).mean(-1, keepdim=True) + ctx.eps)
    n = v * r
    g = grad_y.to(_torch.float32)
    gw = g * weight.detach().to(_torch.float32)
    dv = r * (gw - n * (gw * n).mean(-1, keepdim=True))
    grad_x = grad_r = grad_w = None
    if ctx.needs_input_grad[0]:
        grad_x = _torch.ops.tessera.all_reduce_sum(dv.contiguous(), ctx.rt_handle, ctx.team).to(x.dtype)
    if ctx.needs_input_grad[1]:
        grad_r = dv.to(residual.dtype)
    if ctx.needs_input_grad[2]:
        grad_w = (g * n).reshape(-1, weight.numel()).sum(0).reshape(weight.shape).to(weight.dtype)
    return grad_x, grad_r, grad_w, None, None, None, None


_all_reduce_rmsnorm.register_autograd(_all_reduce_rmsnorm_backward, setup_context=_save_rmsnorm)


def _moe_buffer(rt_handle, max_tokens_per_pe, hidden, topk, num_experts, dtype):
    key = _moe_key(rt_handle, max_tokens_per_pe, hidden, topk, num_experts, dtype)
    op = _AG_GEMMS.get(key)
    if op is None:  # collective: every PE dispatches with the same configuration
        op = _AG_GEMMS[key] = _ops.MoeBuffer(_runtime(rt_handle), max_tokens_per_pe=max_tokens_per_pe,
                                            hidden=hidden, topk=topk, num_experts=num_experts,
                                            dtype=_dtype_name(dtype))
    return key, op


@_torch.library.custom_op("tessera::moe_dispatch", mutates_args=())
def _moe_dispatch(x: _torch.Tensor, topk_idx: _torch.Tensor, topk_weight: _torch.Tensor,
                  rt_handle: int, num_experts: int,
                  max_tokens_per_pe: int) -> tuple[_torch.Tensor, _torch.Tensor]:
    key, moe = _moe_buffer(rt_handle, max_tokens_per_pe, x.shape[1], topk_idx.shape[1],
                           num_experts, x.dtype)
    h = moe.dispatch(x.detach(), topk_idx.detach(), topk_weight.detach())
    _runtime(rt_handle).synchronize()
    _MOE_HANDLES[key] = h
    _MOE_ROUTES[key] = (topk_idx.detach().clone(), topk_weight.detach().clone())
    _MOE_UNIT.pop(key, None)
    # Copies: the handle's views are reused by the next dispatch, a custom op's outputs are not.
    return _torch.from_dlpack(h.expert_x).clone(), _torch.from_dlpack(h.expert_counts).clone()


@_moe_dispatch.register_fake
def _(x, topk_idx, topk_weight, rt_handle, num_experts, max_tokens_per_pe):
    rows = _torch.library.get_ctx().new_dynamic_size()  # how many rows arrive depends on the data
    local_experts = num_experts // _runtime(rt_handle).n_pes
    return x.new_empty((rows, x.shape[1])), x.new_empty((local_experts,), dtype=_torch.int64)


@_torch.library.custom_op("tessera::moe_combine", mutates_args=())
def _moe_combine(expert_out: _torch.Tensor, topk_weight: _torch.Tensor, rt_handle: int,
                 num_experts: int, max_tokens_per_pe: int) -> _torch.Tensor:
    key, moe = _moe_buffer(rt_handle, max_tokens_per_pe, expert_out.shape[1],
                           topk_weight.shape[1], num_experts, expert_out.dtype)
    h = _MOE_HANDLES.get(key)
    if h is None:
        raise RuntimeError("tessera::moe_combine: no moe_dispatch of this configuration came first")
    if not _torch.equal(topk_weight.detach().to(_torch.float32), _MOE_ROUTES[key][1]):
        raise ValueError("tessera::moe_combine: topk_weight is not the one moe_dispatch sent (combine "
                         "weighs by the dispatched weights: pass the same tensor)")
    y = expert_out.new_empty((topk_weight.shape[0], expert_out.shape[1]))
    moe.combine(h, expert_out.detach().contiguous(), y)
    _runtime(rt_handle).synchronize()
    return y


@_moe_combine.register_fake
def _(expert_out, topk_weight, rt_handle, num_experts, max_tokens_per_pe):
    return expert_out.new_empty((topk_weight.shape[0], expert_out.shape[1]))


# ---- autograd of the MoE dispatch and combine ---------------------------------------------------
# dispatch: expert_x[r] = x[token of r] on the token's PE, so dx[t] = sum over t's rows of their
# gradient: a combine of the gradient with unit weights. combine: y[t] = sum_k w[t,k] out[row(t,k)],
# so d out[r] = w_r dy[token of r] (a dispatch of dy, weighted on the expert side) and
# dw[t,k] = <dy[t], out[row(t,k)]>: each row's dot product, made on the expert side and brought
# back by a unit-weight combine of a matrix holding it in column k (hidden >= topk). The unit
# dispatch (of dy, so its rows are the forward's rows) is made once and reused by the dispatch's
# backward. The routing (topk_idx, the weights) is the forward dispatch's, kept per MoeBuffer
# configuration when it runs: the backward differentiates the last forward dispatch of its
# configuration. Eagerly, a backward whose dispatch a later one of the same configuration
# replaced raises; a compiled graph cannot see that (its backward is traced before anything
# runs), so there recompute or interleave two dispatches of one configuration at your own risk.
# The backward's dispatches do not replace the forward's handle: a combine of the forward after
# them raises the buffer's stale-handle error rather than using other weights. Both backwards
# are custom ops with fake impls, so aot_autograd traces them.


def _moe_key(rt_handle, max_tokens_per_pe, hidden, topk, num_experts, dtype):
    return ("moe", rt_handle, max_tokens_per_pe, hidden, topk, num_experts, _dtype_name(dtype))


def _moe_routes(key, op: str):
    routes = _MOE_ROUTES.get(key)
    if routes is None:
        raise RuntimeError(f"tessera::{op}: backward without the forward moe_dispatch of this configuration")
    return routes


def _unit_dispatch(key, rt_handle, routes, rows_like: _torch.Tensor):
    """A dispatch of rows_like (tokens x hidden) with the forward's routing and unit weights, made
    once per forward dispatch and shared by its combine's and its own backward."""
    unit = _MOE_UNIT.get(key)
    if unit is not None and unit[0] is routes:
        return unit[1]
    idx, w = routes
    h = _AG_GEMMS[key].dispatch(rows_like.detach().contiguous(), idx, _torch.ones_like(w))
    _runtime(rt_handle).synchronize()
    _MOE_UNIT[key] = (routes, h)
    return h


@_torch.library.custom_op("tessera::moe_dispatch_backward", mutates_args=())
def _moe_dispatch_backward_op(grad_rows: _torch.Tensor, rt_handle: int, num_experts: int,
                              max_tokens_per_pe: int, tokens: int, topk: int) -> _torch.Tensor:
    """dx of the last moe_dispatch of this configuration, from its rows' gradient."""
    hidden = grad_rows.shape[1]
    key = _moe_key(rt_handle, max_tokens_per_pe, hidden, topk, num_experts, grad_rows.dtype)
    routes = _moe_routes(key, "moe_dispatch")
    h = _unit_dispatch(key, rt_handle, routes, _torch.zeros((tokens, hidden), dtype=grad_rows.dtype))
    dx = grad_rows.new_empty((tokens, hidden))
    _AG_GEMMS[key].combine(h, grad_rows.detach().contiguous(), dx)
    _runtime(rt_handle).synchronize()
    return dx


@_moe_dispatch_backward_op.register_fake
def _(grad_rows, rt_handle, num_experts, max_tokens_per_pe, tokens, topk):
    return grad_rows.new_empty((tokens, grad_rows.shape[1]))


@_torch.library.custom_op("tessera::moe_combine_backward", mutates_args=())
def _moe_combine_backward_op(grad_y: _torch.Tensor, expert_out: _torch.Tensor, rt_handle: int,
                             num_experts: int, max_tokens_per_pe: int, topk: int,
                             need_weights: bool) -> tuple[_torch.Tensor, _torch.Tensor]:
    """(d expert_out, d topk_weight) of the combine of the last moe_dispatch of this
    configuration (d topk_weight zeros unless need_weights)."""
    hidden = expert_out.shape[1]
    key = _moe_key(rt_handle, max_tokens_per_pe, hidden, topk, num_experts, expert_out.dtype)
    idx, w = routes = _moe_routes(key, "moe_combine")
    moe, dtype = _AG_GEMMS[key], expert_out.dtype
    dy = grad_y.detach().to(dtype).contiguous()
    h = moe.dispatch(dy, idx, w)  # dy at every row, with the row's weight
    _runtime(rt_handle).synchronize()
    _MOE_UNIT.pop(key, None)  # a unit dispatch made before is stale now
    rows = _torch.from_dlpack(h.expert_x).to(_torch.float32)
    real = (_torch.from_dlpack(h.src_pe) >= 0).to(_torch.float32)[:, None]  # padding rows: none
    grad_out = (rows * _torch.from_dlpack(h.weight)[:, None] * real).to(dtype)
    grad_w = _torch.zeros((grad_y.shape[0], topk), dtype=_torch.float32)
    if need_weights:
        if hidden < topk:
            raise ValueError(f"tessera::moe_combine: the weights' gradient needs hidden ({hidden}) >= "
                             f"topk ({topk})")
        dots = (rows * expert_out.detach().to(_torch.float32)).sum(1, keepdim=True) * real
        unit = _unit_dispatch(key, rt_handle, routes, dy)
        slot = _torch.from_dlpack(unit.slot).to(_torch.int64).clamp(min=0)[:, None]
        carrier = _torch.zeros((unit.rows, hidden), dtype=_torch.float32).scatter_(1, slot, dots)
        back = _torch.empty((grad_y.shape[0], hidden), dtype=dtype)
        moe.combine(unit, carrier.to(dtype).contiguous(), back)
        _runtime(rt_handle).synchronize()
        grad_w = back[:, :topk].to(_torch.float32)
    return grad_out, grad_w


@_moe_combine_backward_op.register_fake
def _(grad_y, expert_out, rt_handle, num_experts, max_tokens_per_pe, topk, need_weights):
    return _torch.empty_like(expert_out), grad_y.new_empty((grad_y.shape[0], topk), dtype=_torch.float32)


def _routes_now(key):
    """The routing a forward saw, for the eager check (None while a graph is being traced)."""
    return None if _torch.compiler.is_compiling() else _MOE_ROUTES.get(key)


def _check_routes(ctx, op: str) -> None:
    if ctx.routes is not None and _MOE_ROUTES.get(ctx.key) is not ctx.routes:
        raise RuntimeError(f"tessera::{op}: its backward needs its dispatch's routing, but a later "
                           "moe_dispatch of the same configuration replaced it")


def _save_moe_dispatch(ctx, inputs, output):
    x, topk_idx, topk_weight, rt_handle, num_experts, max_tokens_per_pe = inputs
    ctx.key = _moe_key(rt_handle, max_tokens_per_pe, x.shape[1], topk_idx.shape[1], num_experts, x.dtype)
    ctx.routes = _routes_now(ctx.key)
    ctx.args = (rt_handle, num_experts, max_tokens_per_pe, x.shape[0], topk_idx.shape[1])


def _moe_dispatch_backward(ctx, grad_x, _grad_counts):
    _check_routes(ctx, "moe_dispatch")
    dx = _torch.ops.tessera.moe_dispatch_backward(grad_x.contiguous(), *ctx.args)
    return dx, None, None, None, None, None


def _save_moe_combine(ctx, inputs, output):
    expert_out, topk_weight, rt_handle, num_experts, max_tokens_per_pe = inputs
    ctx.key = _moe_key(rt_handle, max_tokens_per_pe, expert_out.shape[1], topk_weight.shape[1],
                       num_experts, expert_out.dtype)
    ctx.routes = _routes_now(ctx.key)
    ctx.args = (rt_handle, num_experts, max_tokens_per_pe, topk_weight.shape[1])
    ctx.save_for_backward(expert_out)


def _moe_combine_backward(ctx, grad_y):
    _check_routes(ctx, "moe_combine")
    (expert_out,) = ctx.saved_tensors
    grad_out, grad_w = _torch.ops.tessera.moe_combine_backward(grad_y.contiguous(), expert_out, *ctx.args,
                                                               bool(ctx.needs_input_grad[1]))
    return grad_out, (grad_w if ctx.needs_input_grad[1] else None), None, None, None


_moe_dispatch.register_autograd(_moe_dispatch_backward, setup_context=_save_moe_dispatch)
_moe_combine.register_autograd(_moe_combine_backward, setup_context=_save_moe_combine)


def gemm_rs(rt, a: _torch.Tensor, b: _torch.Tensor, pattern: str = "auto", direction: str = "auto",
            comm_blocks: int = 1) -> _torch.Tensor:
    """This PE's rows of sum over PEs of a @ b, in fp32 (float32 or bfloat16 inputs)."""
    return _torch.ops.tessera.gemm_rs(a, b, handle(rt), pattern, direction, comm_blocks)


def gemm_ar(rt, a: _torch.Tensor, b: _torch.Tensor, pattern: str = "auto", direction: str = "auto",
            comm_blocks: int = 1) -> _torch.Tensor:
    """Sum over PEs of a @ b (m x n, fp32) on every PE; the GemmAr is cached per shape and options."""
    return _torch.ops.tessera.gemm_ar(a, b, handle(rt), pattern, direction, comm_blocks)


def gemm_as(rt, a: _torch.Tensor, b: _torch.Tensor, pattern: str = "auto", direction: str = "auto",
            comm_blocks: int = 1) -> _torch.Tensor:
    """Every PE's a @ b_local side by side (m x n_local * n_pes, fp32; PE p's block at columns
    p * n_local) on every PE; the GemmAs is cached per shape and options."""
    return _torch.ops.tessera.gemm_as(a, b, handle(rt), pattern, direction, comm_blocks)


def reduce_scatter(rt, send: _torch.Tensor, recv: _torch.Tensor, op: str = "sum", algo: str = "auto",
                   team=None) -> None:
    """recv (symmetric) receives the reduction over members of their block my_rank of send
    (team.size equal blocks); complete on return."""
    _torch.ops.tessera.reduce_scatter_(send, recv, handle(rt), op, algo, handle(team))


def all_to_all(rt, send: _torch.Tensor, recv: _torch.Tensor, team=None) -> None:
    """recv (symmetric) receives block r of send from rank r (team.size equal blocks); complete on
    return."""
    _torch.ops.tessera.all_to_all_(send, recv, handle(rt), handle(team))


def all_to_all_v(rt, send, send_counts, recv, recv_counts, recv_offsets, team=None) -> None:
    """Counts per peer (int64 / uint64 tensors of team.size): recv (symmetric) receives the blocks
    packed in source-rank order, recv_counts / recv_offsets say where; complete on return."""
    _torch.ops.tessera.all_to_all_v_(send, send_counts, recv, recv_counts, recv_offsets, handle(rt),
                                     handle(team))


def broadcast(rt, send, recv: _torch.Tensor, root: int = 0, team=None) -> None:
    """recv (symmetric) receives team rank root's send (None elsewhere is fine); complete on
    return."""
    _torch.ops.tessera.broadcast_(send, recv, handle(rt), root, handle(team))


def all_reduce_rmsnorm(rt, x, residual, weight, eps: float = 1e-6, pattern: str = "auto",
                       team=None) -> _torch.Tensor:
    """rmsnorm(all_reduce(x) + residual) * weight row by row (a new tensor like x; fp32 math)."""
    return _torch.ops.tessera.all_reduce_rmsnorm(x, residual, weight, handle(rt), eps, pattern,
                                                 handle(team))


def moe_dispatch(rt, x, topk_idx, topk_weight, num_experts, max_tokens_per_pe=None):
    """Sends each token to its top-k experts' PEs: (expert_x, expert_counts) of this PE's local
    experts, rows grouped by expert. Collective; the MoeBuffer is cached per configuration."""
    return _torch.ops.tessera.moe_dispatch(x, topk_idx, topk_weight, handle(rt), num_experts,
                                          max_tokens_per_pe or x.shape[0])


def moe_combine(rt, expert_out, topk_weight, num_experts, max_tokens_per_pe=None):
    """y[t] = sum_k w[t,k] * expert_out[row of (t,k)] for the last moe_dispatch of the same
    configuration (pass the same num_experts / max_tokens_per_pe). Collective."""
    return _torch.ops.tessera.moe_combine(expert_out, topk_weight, handle(rt), num_experts,
                                         max_tokens_per_pe or topk_weight.shape[0])


def all_gather(rt, send: _torch.Tensor, recv: _torch.Tensor) -> None:
    """recv (symmetric, n_pes x send) receives every PE's send; complete on return."""
    _torch.ops.tessera.all_gather_(send, recv, handle(rt))


def all_reduce(rt, send: _torch.Tensor, recv: _torch.Tensor, op: str = "sum", algo: str = "auto",
               team=None) -> None:
    """recv (symmetric, at least send's size, same dtype) receives the reduction (op "sum", "max",
    "min", "prod" for integers) of every member's send over `team` (None: every PE); send may be
    recv. Complete on return."""
    _torch.ops.tessera.all_reduce_(send, recv, handle(rt), op, algo, handle(team))


def ag_gemm(rt, a_shard: _torch.Tensor, b: _torch.Tensor, pattern: str = "auto", direction: str = "auto",
            comm_blocks: int = 1) -> _torch.Tensor:
    """all_gather(a_shard) @ b in fp32 (float32 or bfloat16 inputs), the gather overlapped."""
    return _torch.ops.tessera.ag_gemm(a_shard, b, handle(rt), pattern, direction, comm_blocks)


def all_gather_rows(rt, x: _torch.Tensor) -> _torch.Tensor:
    """Every PE's x stacked by rows (a new tensor; x any memory); backward: reduce_scatter_rows."""
    return _torch.ops.tessera.all_gather_rows(x, handle(rt))


def reduce_scatter_rows(rt, x: _torch.Tensor) -> _torch.Tensor:
    """Row block pe (of n_pes) of the sum over PEs of x; backward: all_gather_rows."""
    return _torch.ops.tessera.reduce_scatter_rows(x, handle(rt))


def all_reduce_sum(rt, x: _torch.Tensor, team=None) -> _torch.Tensor:
    """The sum over the team's members of x, on each (a new tensor); backward: all_reduce_sum."""
    return _torch.ops.tessera.all_reduce_sum(x, handle(rt), handle(team))


def broadcast_from(rt, x: _torch.Tensor, root: int = 0) -> _torch.Tensor:
    """PE root's x on every PE (every PE passes one of that shape); backward: the sum to root."""
    return _torch.ops.tessera.broadcast_from(x, handle(rt), root)


def all_to_all_rows(rt, x: _torch.Tensor) -> _torch.Tensor:
    """Row block q of x to PE q, block s of the result from PE s; backward: itself."""
    return _torch.ops.tessera.all_to_all_rows(x, handle(rt))


def all_to_all_v_rows(rt, x: _torch.Tensor, send_rows: _torch.Tensor):
    """send_rows[q] rows of x to PE q: (the rows received in source order, recv_rows per PE);
    backward: the exchange back (recv_rows as the counts)."""
    return _torch.ops.tessera.all_to_all_v_rows(x, send_rows, handle(rt))


def release(rt) -> None:
    """Frees (collectively) the op workspaces cached for `rt`; call before rt.finalize()."""
    key = handle(rt)
    for k in [k for k in _AG_GEMMS if k[1] == key]:
        for cache in (_MOE_HANDLES, _MOE_ROUTES, _MOE_UNIT):
            cache.pop(k, None)
        _AG_GEMMS.pop(k).free()
    _RUNTIMES.pop(key, None)
