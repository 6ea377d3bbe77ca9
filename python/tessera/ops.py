"""The collectives and fused compute-communication ops (tessera::ops), stream-ordered:
``rt.synchronize()`` waits for them and raises their failures. Inputs are any C-contiguous DLPack / buffer-protocol arrays;
buffers documented as symmetric must lie in the heap (``rt.empty`` or views of it). Collectives
take ``team=`` (a ``tessera.Team`` from ``rt.team_world()``, ``rt.team_node()``,
``rt.team_split_strided(...)``; ``None`` is every PE). The fused GEMMs take ``pattern=``
(``"auto"``, ``"bulk_synchronous"``, ``"producer_consumer"``, ``"workgroup_specialized"``,
``"fused_sequential"``), ``direction=`` (``"auto"``, ``"push"``, ``"pull"``) and ``comm_blocks=``."""

from ._tessera.ops import (
    AgGemm,
    GemmAr,
    GemmAs,
    GemmRs,
    MoeBuffer,
    MoeHandle,
    all_gather,
    all_reduce,
    all_reduce_rmsnorm,
    all_to_all,
    all_to_all_v,
    broadcast,
    reduce_scatter,
)

__all__ = [
    "AgGemm",
    "GemmAr",
    "GemmAs",
    "GemmRs",
    "MoeBuffer",
    "MoeHandle",
    "all_gather",
    "all_reduce",
    "all_reduce_rmsnorm",
    "all_to_all",
    "all_to_all_v",
    "broadcast",
    "reduce_scatter",
]
