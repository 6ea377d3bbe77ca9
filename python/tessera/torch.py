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

The custom ops have fake (meta) implementations, so they trace into ``torch.compile`` graphs.
A custom op cannot take a Runtime or a Team, so it takes their handles (``handle(rt)``,
``handle(team)``; team handle 0 is every PE); the functions here pass them. Each op completes
before it returns (it synchronizes the stream).
"""

from __future__ import annotations

from typing import Optional

import torch as _torch

from . import _tessera
from . import ops as _ops

_RUNTIMES: dict[int, object] = {}
_TEAMS: dict[int, object] = {}  # handle -> tessera.Team (0, every PE, is not registered)
_AG_GEMMS: dict[tuple, object] = {}  # op workspaces (AgGemm, GemmRs, MoeBuffer) by shape
_MOE_HANDLES: dict[tuple, object] = {}  # MoeBuffer key -> its last dispatch's MoeHandle
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


@_torch.library.custom_op("tessera::all_reduce_", mutates_args=("recv",))
def _all_reduce(send: _torch.Tensor, recv: _torch.Tensor, rt_handle: int, op: str = "sum",
                algo: str = "auto", team: int = 0) -> None:
    rt = _runtime(rt_handle)
    _ops.all_reduce(rt, send.detach(), recv.detach(), op=op, algo=algo, team=_team(team))
    rt.synchronize()


@_all_reduce.register_fake
def _(send, recv, rt_handle, op="sum", algo="auto", team=0):
    return None


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


@_torch.library.custom_op("tessera::gemm_rs", mutates_args=())
def _gemm_rs(a: _torch.Tensor, b: _torch.Tensor, rt_handle: int, pattern: str = "auto",
             direction: str = "auto", comm_blocks: int = 1) -> _torch.Tensor:
    m, k_local = a.shape
    op = _fused_gemm("gemm_rs", _ops.GemmRs, rt_handle, (m, b.shape[1], k_local), _dtype_name(a.dtype),
                     pattern, direction, comm_blocks)
    return _run_gemm(op, rt_handle, a, b, (m // _runtime(rt_handle).n_pes, b.shape[1]))


@_gemm_rs.register_fake
def _(a, b, rt_handle, pattern="auto", direction="auto", comm_blocks=1):
    return a.new_empty((a.shape[0] // _runtime(rt_handle).n_pes, b.shape[1]), dtype=_torch.float32)


@_torch.library.custom_op("tessera::gemm_ar", mutates_args=())
def _gemm_ar(a: _torch.Tensor, b: _torch.Tensor, rt_handle: int, pattern: str = "auto",
             direction: str = "auto", comm_blocks: int = 1) -> _torch.Tensor:
    m, k_local = a.shape
    op = _fused_gemm("gemm_ar", _ops.GemmAr, rt_handle, (m, b.shape[1], k_local), _dtype_name(a.dtype),
                     pattern, direction, comm_blocks)
    return _run_gemm(op, rt_handle, a, b, (m, b.shape[1]))


@_gemm_ar.register_fake
def _(a, b, rt_handle, pattern="auto", direction="auto", comm_blocks=1):
    return a.new_empty((a.shape[0], b.shape[1]), dtype=_torch.float32)


@_torch.library.custom_op("tessera::gemm_as", mutates_args=())
def _gemm_as(a: _torch.Tensor, b: _torch.Tensor, rt_handle: int, pattern: str = "auto",
             direction: str = "auto", comm_blocks: int = 1) -> _torch.Tensor:
    m, k = a.shape
    n_local = b.shape[1]
    op = _fused_gemm("gemm_as", _ops.GemmAs, rt_handle, (m, n_local, k), _dtype_name(a.dtype), pattern,
                     direction, comm_blocks)
    return _run_gemm(op, rt_handle, a, b, (m, n_local * _runtime(rt_handle).n_pes))


@_gemm_as.register_fake
def _(a, b, rt_handle, pattern="auto", direction="auto", comm_blocks=1):
    return a.new_empty((a.shape[0], b.shape[1] * _runtime(rt_handle).n_pes), dtype=_torch.float32)


@_torch.library.custom_op("tessera::all_gather_rows", mutates_args=())
def _all_gather_rows(x: _torch.Tensor, rt_handle: int) -> _torch.Tensor:
    """Every PE's x stacked by rows, (n_pes * rows, *rest), as a new tensor: x (any memory) is
    gathered into a heap staging buffer cached per shape (freed by release), then copied out."""
    rt = _runtime(rt_handle)
    key = ("all_gather_rows", rt_handle, tuple(x.shape), _dtype_name(x.dtype))
    staging = _AG_GEMMS.get(key)
    if staging is None:  # collective: every PE gathers the same shapes in the same order
        staging = _AG_GEMMS[key] = rt.empty((rt.n_pes, *x.shape), _dtype_name(x.dtype))
    recv = _torch.from_dlpack(staging)
    _ops.all_gather(rt, x.detach().contiguous(), recv)
    rt.synchronize()
    return recv.reshape(rt.n_pes * x.shape[0], *x.shape[1:]).clone()


@_all_gather_rows.register_fake
def _(x, rt_handle):
    return x.new_empty((x.shape[0] * _runtime(rt_handle).n_pes, *x.shape[1:]))


# ---- autograd of the fused GEMMs ----------------------------------------------------------------
# Each PE's inputs are its own tensors, and each backward gives the gradient of that PE's inputs.
# A sharded output (ag_gemm's and gemm_rs's C) has a gradient of its own on every PE, so those
# backwards communicate, through Tessera's fused ops (ag_gemm <-> gemm_rs), with the "auto"
# pattern whatever the forward used. A replicated output (gemm_ar's and gemm_as's C, the same on
# every PE) follows the tensor-parallel convention: its gradient is the same on every PE (every PE
# holds the same loss), so those backwards are local; where an input is one logical tensor held by
# every PE, summing its gradient across PEs is the caller's (as Megatron's f operator does).
# Gradients come back in the inputs' dtypes (the GEMMs run in fp32).


def _save_gemm_inputs(ctx, inputs, output):
    a, b, rt_handle = inputs[0], inputs[1], inputs[2]
    ctx.save_for_backward(a, b)
    ctx.rt_handle = rt_handle


def _fp32_t(x: _torch.Tensor) -> _torch.Tensor:
    return x.detach().t().to(_torch.float32).contiguous()


def _ag_gemm_backward(ctx, grad_c):
    # C = all_gather(A) @ B: dA_shard = reduce_scatter(dC @ B^T) (gemm_rs); dB = all_gather(A)^T @ dC.
    a_shard, b = ctx.saved_tensors
    g = grad_c.contiguous()
    grad_a = grad_b = None
    if ctx.needs_input_grad[0]:
        grad_a = _torch.ops.tessera.gemm_rs(g, _fp32_t(b), ctx.rt_handle).to(a_shard.dtype)
    if ctx.needs_input_grad[1]:
        a_full = _torch.ops.tessera.all_gather_rows(a_shard.detach().contiguous(), ctx.rt_handle)
        grad_b = (a_full.t().to(_torch.float32) @ g).to(b.dtype)
    return grad_a, grad_b, None, None, None, None


def _gemm_rs_backward(ctx, grad_c):
    # C_shard = reduce_scatter(A @ B): dA = all_gather(dC) @ B^T (ag_gemm); dB = A^T @ all_gather(dC).
    a, b = ctx.saved_tensors
    g = grad_c.contiguous()
    grad_a = grad_b = None
    if ctx.needs_input_grad[0]:
        grad_a = _torch.ops.tessera.ag_gemm(g, _fp32_t(b), ctx.rt_handle).to(a.dtype)
    if ctx.needs_input_grad[1]:
        g_full = _torch.ops.tessera.all_gather_rows(g, ctx.rt_handle)
        grad_b = (_fp32_t(a) @ g_full).to(b.dtype)
    return grad_a, grad_b, None, None, None, None


def _gemm_ar_backward(ctx, grad_c):
    # C = sum over PEs of A_p @ B_p, replicated: dA_p = dC @ B_p^T, dB_p = A_p^T @ dC (local).
    a, b = ctx.saved_tensors
    g = grad_c.contiguous()
    grad_a = (g @ _fp32_t(b)).to(a.dtype) if ctx.needs_input_grad[0] else None
    grad_b = (_fp32_t(a) @ g).to(b.dtype) if ctx.needs_input_grad[1] else None
    return grad_a, grad_b, None, None, None, None


def _gemm_as_backward(ctx, grad_c):
    # C = [A_0 @ B_0 ... A_{P-1} @ B_{P-1}], replicated: this PE's columns dC_p give
    # dA_p = dC_p @ B_p^T and dB_p = A_p^T @ dC_p (local).
    a, b = ctx.saved_tensors
    n_local = b.shape[1]
    pe = _runtime(ctx.rt_handle).pe
    g_mine = grad_c[:, pe * n_local:(pe + 1) * n_local].contiguous()
    grad_a = (g_mine @ _fp32_t(b)).to(a.dtype) if ctx.needs_input_grad[0] else None
    grad_b = (_fp32_t(a) @ g_mine).to(b.dtype) if ctx.needs_input_grad[1] else None
    return grad_a, grad_b, None, None, None, None


_ag_gemm.register_autograd(_ag_gemm_backward, setup_context=_save_gemm_inputs)
_gemm_rs.register_autograd(_gemm_rs_backward, setup_context=_save_gemm_inputs)
_gemm_ar.register_autograd(_gemm_ar_backward, setup_context=_save_gemm_inputs)
_gemm_as.register_autograd(_gemm_as_backward, setup_context=_save_gemm_inputs)


@_torch.library.custom_op("tessera::reduce_scatter_", mutates_args=("recv",))
def _reduce_scatter(send: _torch.Tensor, recv: _torch.Tensor, rt_handle: int, op: str = "sum",
                    algo: str = "auto", team: int = 0) -> None:
    rt = _runtime(rt_handle)
    _ops.reduce_scatter(rt, send.detach(), recv.detach(), op=op, algo=algo, team=_team(team))
    rt.synchronize()


@_reduce_scatter.register_fake
def _(send, recv, rt_handle, op="sum", algo="auto", team=0):
    return None


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


def _moe_buffer(rt_handle, max_tokens_per_pe, hidden, topk, num_experts, dtype):
    key = ("moe", rt_handle, max_tokens_per_pe, hidden, topk, num_experts, _dtype_name(dtype))
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
    y = expert_out.new_empty((topk_weight.shape[0], expert_out.shape[1]))
    moe.combine(h, expert_out.detach().contiguous(), y)
    _runtime(rt_handle).synchronize()
    return y


@_moe_combine.register_fake
def _(expert_out, topk_weight, rt_handle, num_experts, max_tokens_per_pe):
    return expert_out.new_empty((topk_weight.shape[0], expert_out.shape[1]))


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


def release(rt) -> None:
    """Frees (collectively) the op workspaces cached for `rt`; call before rt.finalize()."""
    key = handle(rt)
    for k in [k for k in _AG_GEMMS if k[1] == key]:
        _MOE_HANDLES.pop(k, None)
        _AG_GEMMS.pop(k).free()
    _RUNTIMES.pop(key, None)
