"""Tessera from Python: symmetric-memory arrays (NumPy / torch through DLPack), the host API and
the fused ops. Start with ``rt = tessera.init()`` under a launcher (tessera-run, mpirun, torchrun)
or alone (one PE). See docs/python.md.
"""

from __future__ import annotations

from . import errors
from .errors import (
    BackendError,
    BootstrapError,
    Error,
    InternalError,
    InvalidArgumentError,
    OutOfMemoryError,
    PeerLostError,
    TimeoutError,
    TransportError,
)
from ._tessera import (
    DEVICE_CONTEXT_FIELDS,
    TRITON_CONTEXT_WORDS,
    Array,
    Graph,
    Runtime,
    Stream,
    Team,
    __version__,
    backend_available,
    init,
)
from . import ops


def _triton_context(self, device=None):
    """The flat kernel context tessera.triton's functions take (``ctx``): a 1-D torch.int64
    tensor, laid out as ``tessera.TRITON_CONTEXT_WORDS`` (device/tessera/device/flat_context.hpp):
    this PE, the number of PEs, the heap size, the wait bound, the flags, the control page, the
    proxy ring, the failure record, the control page's segment offset, every PE's heap base as
    mapped here (0: another node), then every PE's control page as mapped here.
    It lives on ``device`` (default: where the heap is: the CPU on the host backend, this PE's GPU
    on a GPU backend). Make it once after init; it stays valid until finalize."""
    import torch

    if device is None:
        device = "cpu" if self.backend == "host" else torch.device("cuda", torch.cuda.current_device())
    return torch.tensor(self._triton_context_words(), dtype=torch.int64, device=device)


Runtime.triton_context = _triton_context

__all__ = [
    "Array",
    "BackendError",
    "BootstrapError",
    "DEVICE_CONTEXT_FIELDS",
    "TRITON_CONTEXT_WORDS",
    "Error",
    "Graph",
    "InternalError",
    "InvalidArgumentError",
    "OutOfMemoryError",
    "PeerLostError",
    "Runtime",
    "Stream",
    "Team",
    "TimeoutError",
    "TransportError",
    "__version__",
    "backend_available",
    "errors",
    "init",
    "ops",
]
