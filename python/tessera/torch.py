"""tessera.torch: symmetric torch tensors and the ops as torch custom ops (namespace ``tessera``).

    t = tessera.torch.empty(rt, (m, k), dtype=torch.bfloat16)    # a torch.Tensor on the heap
    c = tessera.torch.ag_gemm(rt, a_shard, b)                     # torch.ops.tessera.ag_gemm
    tessera.torch.all_gather(rt, send, recv)                      # torch.ops.tessera.all_gather_

The custom ops have fake (meta) implementations, so they trace into ``torch.compile`` graphs.
A custom op cannot take a Runtime, so it takes the runtime's handle (``handle(rt)``); the
functions here pass it. Each op completes before it returns (it synchronizes the stream).
"""

from __future__ import annotations

import torch as _torch

from . import ops as _ops

_RUNTIMES: dict[int, object] = {}
_AG_GEMMS: dict[tuple, object] = {}
_ARRAYS: dict[int, object] = {}  # data_ptr -> tessera.Array of tensors made by empty/zeros


def handle(rt) -> int:
    """The integer the custom ops know `rt` by (registered on first use)."""
    key = id(rt)
    _RUNTIMES[key] = rt
    return key


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


def all_gather(rt, send: _torch.Tensor, recv: _torch.Tensor) -> None:
    """recv (symmetric, n_pes x send) receives every PE's send; complete on return."""
    _torch.ops.tessera.all_gather_(send, recv, handle(rt))


def ag_gemm(rt, a_shard: _torch.Tensor, b: _torch.Tensor) -> _torch.Tensor:
    """all_gather(a_shard) @ b in fp32 (float32 or bfloat16 inputs), the gather overlapped."""
    return _torch.ops.tessera.ag_gemm(a_shard, b, handle(rt))


def release(rt) -> None:
    """Frees (collectively) the op workspaces cached for `rt`; call before rt.finalize()."""
    key = handle(rt)
    for k in [k for k in _AG_GEMMS if k[0] == key]:
        _AG_GEMMS.pop(k).free()
    _RUNTIMES.pop(key, None)
