import pytest

import tessera


def test_hierarchy():
    for cls in (tessera.InvalidArgumentError, tessera.OutOfMemoryError, tessera.TimeoutError,
                tessera.PeerLostError, tessera.BootstrapError, tessera.TransportError,
                tessera.BackendError, tessera.InternalError):
        assert issubclass(cls, tessera.Error) and issubclass(cls, RuntimeError)
    assert issubclass(tessera.InvalidArgumentError, ValueError)
    assert issubclass(tessera.OutOfMemoryError, MemoryError)
    # One class per C++ code.
    names = {cls.code for cls in tessera.errors._BY_CODE.values()}
    assert names == set(tessera._tessera._error_code_names())


def test_error_carries_pe_code_and_message(rt):
    with pytest.raises(tessera.InvalidArgumentError) as info:
        rt.transport(rt.n_pes + 3)
    e = info.value
    assert e.pe == rt.pe and e.code == "InvalidArgument"
    assert e.message and e.message in str(e)
