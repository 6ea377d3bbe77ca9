import numpy as np
import pytest

import tessera


def neighbours(rt):
    return (rt.pe + 1) % rt.n_pes, (rt.pe + rt.n_pes - 1) % rt.n_pes


def test_write_through_numpy_view_is_seen_by_peers_get(rt):
    right, left = neighbours(rt)
    a = rt.zeros(256, "int64")
    np.from_dlpack(a)[:] = np.arange(256) + 1000 * rt.pe
    rt.barrier()
    got = np.zeros(256, np.int64)
    rt.get(got, a, left)
    assert (got == np.arange(256) + 1000 * left).all()
    rt.barrier()
    a.free()


def test_put_then_barrier(rt):
    right, left = neighbours(rt)
    a = rt.zeros((8, 8), "float32")
    rt.put(a, np.full((8, 8), rt.pe + 0.5, np.float32), right)
    rt.barrier()
    assert (np.from_dlpack(a) == left + 0.5).all()
    rt.barrier()
    a.free()


def test_peer_views(rt):
    right, left = neighbours(rt)
    a = rt.full(32, rt.pe, "int32")
    rt.barrier()
    if rt.transport(left) in ("self", "mapped"):
        view = rt.peer(a, left)
        assert view.is_view and view.pe == left and view.offset == a.offset
        assert (np.from_dlpack(view) == left).all()
        rt.barrier()
        np.from_dlpack(rt.peer(a, right))[0] = 100 + rt.pe  # write into the right PE's copy
        rt.barrier()
        assert np.from_dlpack(a)[0] == 100 + left
        with pytest.raises(tessera.InvalidArgumentError, match="view"):
            view.free()
    else:
        with pytest.raises(tessera.TransportError, match="not mapped"):
            rt.peer(a, left)
    rt.barrier()
    a.free()
    with pytest.raises(tessera.InvalidArgumentError):
        rt.peer(a, left)


def test_peer_outside_the_job(rt):
    with rt.zeros(4, "int32") as a:
        with pytest.raises(tessera.InvalidArgumentError, match="outside the job"):
            rt.peer(a, rt.n_pes)


def test_put_get_bad_input(rt):
    with rt.zeros(16, "float32") as a:
        with pytest.raises(tessera.InvalidArgumentError, match="contiguous"):
            rt.put(a, np.zeros((16, 2), np.float32)[:, 0], rt.pe)
        with pytest.raises(tessera.InvalidArgumentError, match="bytes"):
            rt.put(a, np.zeros(15, np.float32), rt.pe)
        with pytest.raises(tessera.InvalidArgumentError, match="symmetric heap"):
            rt.put(np.zeros(16, np.float32), np.zeros(16, np.float32), rt.pe)
        with pytest.raises(tessera.InvalidArgumentError, match="read-only"):
            ro = np.zeros(16, np.float32)
            ro.flags.writeable = False
            rt.get(ro, a, rt.pe)
        with pytest.raises(tessera.InvalidArgumentError, match="expected an array"):
            rt.put(a, "not an array", rt.pe)
        rt.barrier()


def test_signal_and_wait(rt):
    right, left = neighbours(rt)
    sig = rt.zeros(1, "uint64")
    data = rt.zeros(64, "float32")
    rt.put(data, np.full(64, rt.pe, np.float32), right)
    rt.signal(sig, 1, right, op="add")
    rt.wait_until(sig, ">=", 1)
    assert (np.from_dlpack(data) == left).all()
    rt.barrier()
    data.free()
    sig.free()


def test_wait_until_returns_the_value_it_saw(rt):
    """The wait returns the word's value that satisfied the comparison, not the value compared
    against: 5 for >= 3. The barrier keeps the second signal out of the first wait."""
    right, left = neighbours(rt)
    with rt.zeros(1, "uint64") as sig:
        rt.signal(sig, 5, right, op="add")
        seen = rt.wait_until(sig, ">=", 3)
        assert type(seen) is int and seen == 5
        rt.barrier()
        rt.signal(sig, 2, right, op="add")
        assert rt.wait_until(sig, "==", 7, timeout=10) == 7
        rt.barrier()


def test_gil_released_in_wait(rt):
    """A Python thread of this PE sets the signal the main thread waits for, after ~50 ms of
    Python work that needs the GIL many times over: it finishes only when wait_until releases the
    GIL (else the wait times out)."""
    import threading

    with rt.zeros(1, "uint64") as sig:
        word = np.from_dlpack(sig)
        go = threading.Event()

        def set_later():
            go.wait()
            sum(range(2_000_000))
            word[0] = 7

        setter = threading.Thread(target=set_later)
        setter.start()
        go.set()
        rt.wait_until(sig, "==", 7, timeout=10)
        setter.join()
        rt.barrier()
