"""tessera.torch: symmetric torch tensors and the ops as torch custom ops (namespace ``tessera``).

    t = tessera.torch.empty(rt, (m, k), dtype=torch.bfloat16)    # a torch.Tensor on the heap
    c = tessera.torch.ag_gemm(rt, a_shard, b)                     # torch.ops.tessera.ag_gemm
    tessera.torch.all_gather(rt, send, recv)                      # torch.ops.tessera.all_gather_
    tessera.torch.all_reduce(rt, send, recv, op="sum")            # torch.ops.tessera.all_reduce_
    c = tessera.torch.gemm_rs(rt, a, b)                           # torch.ops.tessera.gemm_rs
    ex, counts = tessera.torch.moe_dispatch(rt, x, idx, w, num_experts=E)  # tessera::moe_dispatch
    y = tessera.torch.moe_combine(rt, expert_out, w, num_experts=E)       # tessera::moe_combine

The custom ops have fake (meta) implementations, so they trace into ``torch.compile`` graphs.
A custom op cannot take a Runtime or a Team, so it takes their handles (``handle(rt)``,
``handle(team)``; team handle 0 is every PE); the functions here pass them. Each op completes
before it returns (it synchronizes the stream).
"""

from __future__ import annotations

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


@_torch.library.custom_op("tessera::ag_gemm", mutates_args=())
def _ag_gemm(a_shard: _torch.Tensor, b: _torch.Tensor, rt_handle: int) -> _torch.Tensor:
    rt = _runtime(rt_handle)
    rows, k = a_shard.shape
    n_local = b.shape[1]
    m = rows * rt.n_pes
    dtype = _dtype_name(a_shard.dtype)
    key = (rt_handle, m, n_local, k, dtype)
    op = _AG_GEMMS.get(key)
    if op is None:  # collective: every PE makes the same calls, so they build it together
        op = _AG_GEMMS[key] = _ops.AgGemm(rt, m, n_local, k, dtype)
    c = _torch.empty((m, n_local), dtype=_torch.float32)
    op.run(a_shard.detach(), b.detach(), c)
    rt.synchronize()
    return c


@_ag_gemm.register_fake
def _(a_shard, b, rt_handle):
    # The world size is not in the op's arguments: a fake tensor's rows come from the runtime.
    n_pes = _runtime(rt_handle).n_pes
    return a_shard.new_empty((a_shard.shape[0] * n_pes, b.shape[1]), dtype=_torch.float32)


@_torch.library.custom_op("tessera::gemm_rs", mutates_args=())
def _gemm_rs(a: _torch.Tensor, b: _torch.Tensor, rt_handle: int) -> _torch.Tensor:
    rt = _runtime(rt_handle)
    m, k_local = a.shape
    n = b.shape[1]
    dtype = _dtype_name(a.dtype)
    key = ("gemm_rs", rt_handle, m, n, k_local, dtype)
    op = _AG_GEMMS.get(key)
    if op is None:  # collective, like ag_gemm's
        op = _AG_GEMMS[key] = _ops.GemmRs(rt, m, n, k_local, dtype)
    c = _torch.empty((m // rt.n_pes, n), dtype=_torch.float32)
    op.run(a.detach(), b.detach(), c)
    rt.synchronize()
    return c


@_gemm_rs.register_fake
def _(a, b, rt_handle):
    return a.new_empty((a.shape[0] // _runtime(rt_handle).n_pes, b.shape[1]), dtype=_torch.float32)


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


def gemm_rs(rt, a: _torch.Tensor, b: _torch.Tensor) -> _torch.Tensor:
    """This PE's rows of sum over PEs of a @ b, in fp32 (float32 or bfloat16 inputs)."""
    return _torch.ops.tessera.gemm_rs(a, b, handle(rt))


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


def ag_gemm(rt, a_shard: _torch.Tensor, b: _torch.Tensor) -> _torch.Tensor:
    """all_gather(a_shard) @ b in fp32 (float32 or bfloat16 inputs), the gather overlapped."""
    return _torch.ops.tessera.ag_gemm(a_shard, b, handle(rt))


def release(rt) -> None:
    """Frees (collectively) the op workspaces cached for `rt`; call before rt.finalize()."""
    key = handle(rt)
    for k in [k for k in _AG_GEMMS if key in k[:2]]:
        _MOE_HANDLES.pop(k, None)
        _AG_GEMMS.pop(k).free()
    _RUNTIMES.pop(key, None)
