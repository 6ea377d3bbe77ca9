import numpy as np
import pytest

import tessera

DTYPES = ["float32", "float64", "float16", "int8", "int16", "int32", "int64",
          "uint8", "uint16", "uint32", "uint64"]


def gather_ints(rt, values):
    """Every PE's `values` (int64), through the library's all_gather."""
    send = np.asarray(values, dtype=np.int64)
    recv = rt.zeros((rt.n_pes, send.size), "int64")
    tessera.ops.all_gather(rt, send, recv)
    rt.synchronize()
    out = np.from_dlpack(recv).copy()
    recv.free()
    return out


def test_same_offsets_on_every_pe(rt):
    arrays = [rt.empty((3, 5), "float32"), rt.zeros(100, "uint8"), rt.full(7, 1, "int64")]
    offsets = gather_ints(rt, [a.offset for a in arrays])
    assert (offsets == offsets[0]).all()
    for a in reversed(arrays):
        a.free()


@pytest.mark.parametrize("dtype", DTYPES)
def test_dtypes_zero_copy(rt, dtype):
    a = rt.full((4, 3), 5, dtype)
    v = np.from_dlpack(a)
    assert v.dtype == np.dtype(dtype) and v.shape == (4, 3)
    assert (v == 5).all()
    assert v.ctypes.data == a.data_ptr  # a view, not a copy
    v[1, 2] = 9
    assert np.from_dlpack(a)[1, 2] == 9
    a.free()


def test_bfloat16_exports_dlpack(rt):
    a = rt.full(8, 1.5, "bfloat16")
    assert a.dtype == "bfloat16" and a.itemsize == 2
    raw = np.frombuffer((np.ctypeslib.ctypes.c_uint16 * 8).from_address(a.data_ptr), dtype=np.uint16)
    assert (raw == 0x3FC0).all()  # 1.5 in bfloat16
    assert a.__dlpack_device__() == (1, 0)
    a.free()


def test_size_mismatch_is_invalid_argument_on_every_pe(rt):
    if rt.n_pes == 1:
        pytest.skip("needs two PEs to disagree")
    with pytest.raises(tessera.InvalidArgumentError) as info:
        rt.empty(16 + rt.pe, "uint8")
    e = info.value
    assert e.pe == rt.pe
    assert "disagree" in e.message or "differ" in e.message, e.message
    assert str(e).startswith("tessera [PE %d] InvalidArgument:" % rt.pe)
    # The job is still usable.
    a = rt.zeros(4, "int32")
    rt.barrier()
    a.free()


def test_alloc_free_cycles_do_not_grow(rt):
    free_before = rt.heap_free_bytes
    first = None
    for _ in range(1000):
        a = rt.empty(1000, "float32")
        if first is None:
            first = a.offset
        assert a.offset == first
        a.free()
    assert rt.heap_free_bytes == free_before


def test_context_manager_and_freed_array(rt):
    with rt.zeros(10, "int32") as a:
        view = np.from_dlpack(a)
        assert view.sum() == 0
    assert a.freed
    with pytest.raises(tessera.InvalidArgumentError, match="freed"):
        np.from_dlpack(a)
    with pytest.raises(tessera.InvalidArgumentError, match="freed"):
        a.free()


def test_zero_size_array(rt):
    a = rt.empty((0, 4), "float32")
    assert a.size == 0 and np.from_dlpack(a).shape == (0, 4)
    a.free()


def test_unsupported_dtype(rt):
    with pytest.raises(tessera.InvalidArgumentError, match="unsupported dtype"):
        rt.empty(4, "complex64")


def test_out_of_memory(rt):
    with pytest.raises(tessera.OutOfMemoryError):
        rt.empty(rt.heap_size + 4096, "uint8")
    rt.barrier()


def test_arrays_die_with_their_runtime():
    other = tessera.init(heap_size="16M")
    a = other.zeros(4, "float32")
    other.finalize()
    with pytest.raises(tessera.InvalidArgumentError, match="finalized"):
        np.from_dlpack(a)
    with pytest.raises(tessera.InvalidArgumentError, match="finalized"):
        other.barrier()
