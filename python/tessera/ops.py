"""The fused compute-communication ops (tessera::ops), stream-ordered: ``rt.synchronize()`` waits
for them and raises their failures. Inputs are any C-contiguous DLPack / buffer-protocol arrays;
buffers documented as symmetric must lie in the heap (``rt.empty`` or views of it). Collectives
take ``team=`` (a ``tessera.Team`` from ``rt.team_world()``, ``rt.team_node()``,
``rt.team_split_strided(...)``; ``None`` is every PE)."""

from ._tessera.ops import AgGemm, GemmRs, MoeBuffer, MoeHandle, all_gather, all_reduce

__all__ = ["AgGemm", "GemmRs", "MoeBuffer", "MoeHandle", "all_gather", "all_reduce"]
