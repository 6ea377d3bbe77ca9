"""Exceptions of the tessera package: one class per C++ tessera::ErrorCode."""

from __future__ import annotations


class Error(RuntimeError):
    """A failure reported by Tessera.

    ``str(e)`` reads ``tessera [PE p] Code: message`` (the C++ ``what()``); ``e.message`` is the
    library's message alone, ``e.pe`` the PE that raised it (-1 before init) and ``e.code`` the
    C++ code's name (``"Timeout"``, ``"PeerLost"``, ...).
    """

    code = "Unknown"

    def __init__(self, what: str, message: str | None = None, pe: int = -1, code: str | None = None):
        super().__init__(what)
        self.message = what if message is None else message
        self.pe = pe
        if code is not None:
            self.code = code


class InvalidArgumentError(Error, ValueError):
    """A caller passed something the API cannot accept (also: PEs disagree in a collective)."""

    code = "InvalidArgument"


class OutOfMemoryError(Error, MemoryError):
    """The symmetric heap (or host memory) cannot satisfy a request."""

    code = "OutOfMemory"


class TimeoutError(Error):  # noqa: A001 - the library's name for ErrorCode::timeout
    """A bounded wait expired (TESSERA_TIMEOUT, or a call's timeout=)."""

    code = "Timeout"


class PeerLostError(Error):
    """A peer PE died, failed or closed its connection."""

    code = "PeerLost"


class BootstrapError(Error):
    """The bootstrap could not form or run the job."""

    code = "Bootstrap"


class TransportError(Error):
    """A peer cannot be reached by the transport asked for (e.g. peer() on another node)."""

    code = "Transport"


class BackendError(Error):
    """The OS or GPU runtime refused an operation."""

    code = "Backend"


class InternalError(Error):
    """A broken invariant inside Tessera."""

    code = "Internal"


_BY_CODE = {
    cls.code: cls
    for cls in (
        InvalidArgumentError,
        OutOfMemoryError,
        TimeoutError,
        PeerLostError,
        BootstrapError,
        TransportError,
        BackendError,
        InternalError,
    )
}
