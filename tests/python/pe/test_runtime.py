import os

import pytest

import tessera


def test_identity(rt):
    assert 0 <= rt.pe < rt.n_pes
    assert 0 <= rt.node_pe < rt.node_size <= rt.n_pes
    assert rt.backend == "host"
    assert rt.transport(rt.pe) == "self"
    expected = os.environ.get("TESSERA_SIZE") or os.environ.get("OMPI_COMM_WORLD_SIZE") or os.environ.get("WORLD_SIZE")
    if expected:
        assert rt.n_pes == int(expected)
    assert repr(rt).startswith("tessera.Runtime(pe=")


def test_barrier_many(rt):
    for _ in range(50):
        rt.barrier()


def test_heap_bases_and_device_context(rt):
    import numpy as np

    bases = np.asarray(rt.heap_bases())
    assert bases.dtype == np.uint64 and bases.shape == (rt.n_pes,)
    assert all(bases[p] != 0 for p in range(rt.n_pes) if rt.transport(p) in ("self", "mapped"))
    ctx = np.from_dlpack(rt.device_context())
    fields = dict(zip(tessera.DEVICE_CONTEXT_FIELDS, ctx.tolist()))
    assert fields["my_pe"] == rt.pe and fields["n_pes"] == rt.n_pes
    assert fields["heap_size"] == rt.heap_size
    assert fields["timeout_ns"] == int(rt.timeout * 1e9)
    # The heap-base table the context points at holds the same bases heap_bases() reports.
    table = np.ctypeslib.as_array((np.ctypeslib.ctypes.c_uint64 * rt.n_pes).from_address(fields["peer_base"]))
    assert list(table) == list(bases)


def test_init_overrides_and_version(rt):
    assert rt.heap_size == 64 << 20
    assert tessera.__version__.count(".") == 2


def test_bad_init_argument(rt):
    with pytest.raises(tessera.InvalidArgumentError, match="backend"):
        tessera.init(backend="tpu")
