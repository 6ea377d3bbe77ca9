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
    Array,
    Runtime,
    __version__,
    backend_available,
    init,
)
from . import ops

__all__ = [
    "Array",
    "BackendError",
    "BootstrapError",
    "DEVICE_CONTEXT_FIELDS",
    "Error",
    "InternalError",
    "InvalidArgumentError",
    "OutOfMemoryError",
    "PeerLostError",
    "Runtime",
    "TimeoutError",
    "TransportError",
    "__version__",
    "backend_available",
    "errors",
    "init",
    "ops",
]
