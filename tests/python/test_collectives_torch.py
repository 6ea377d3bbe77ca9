"""The collectives as torch custom ops (torch.ops.tessera.*), as real processes like
test_collectives.py: eager on every dtype torch has and NumPy lacks (bfloat16), in place, under
torch.compile, on a team, and their fake implementations."""

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="torch is not installed in this Python (pip install torch)")

import tessera
import tessera.torch as tt

from test_collectives import all_mapped, data_of, reference


@pytest.fixture(scope="module")
def rt():
    runtime = tessera.init(heap_size="64M")
    yield runtime
    tt.release(runtime)
    runtime.finalize()


@pytest.fixture(scope="module")
def mapped(rt):
    """Whether every PE's heap is mapped here (one node), the same answer on every PE."""
    return all_mapped(rt, rt.team_world())


def tensor_of(pe, count, dtype, op, salt=0):
    return torch.from_numpy(data_of(pe, count, "float32" if dtype.is_floating_point else "int64", op, salt)).to(dtype)


def torch_reference(rt, members, count, dtype, op, salt=0):
    npdtype = "float32" if dtype.is_floating_point else "int64"
    return torch.from_numpy(reference(members, count, npdtype, op, salt)).to(dtype)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16, torch.float32, torch.int32, torch.int64])
@pytest.mark.parametrize("op", ["sum", "max", "min"])
def test_all_reduce_custom_op_matches_reference(rt, mapped, dtype, op):
    if not mapped:
        pytest.skip("a peer's heap is not mapped here (another node)")
    recv = tt.zeros(rt, (4093,), dtype=dtype)
    for count in (1, 7, 4093):
        out = recv[:count]
        tt.all_reduce(rt, tensor_of(rt.pe, count, dtype, op), out, op=op)
        assert torch.equal(out, torch_reference(rt, range(rt.n_pes), count, dtype, op)), (dtype, op, count)
    rt.barrier()
    tt.free(recv)


def test_all_reduce_custom_op_in_place_on_a_team(rt, mapped):
    if not mapped:
        pytest.skip("a peer's heap is not mapped here (another node)")
    even = rt.team_split_strided(rt.team_world(), 0, 2, (rt.n_pes + 1) // 2)
    buf = tt.zeros(rt, (64, 8), dtype=torch.bfloat16)
    if even.is_member:
        for i in range(3):
            buf.copy_(tensor_of(rt.pe, 512, torch.bfloat16, "max", salt=i).view(64, 8))
            rt.barrier()  # every member's buffer is filled before any member reads it
            torch.ops.tessera.all_reduce_(buf, buf, tt.handle(rt), "max", "ring", tt.handle(even))
            expected = torch_reference(rt, range(0, rt.n_pes, 2), 512, torch.bfloat16, "max", salt=i)
            assert torch.equal(buf.view(-1), expected)
            rt.barrier()
    else:
        for i in range(3):
            rt.barrier()
            rt.barrier()
    tt.free(buf)


def test_all_reduce_under_torch_compile(rt, mapped):
    if not mapped:
        pytest.skip("a peer's heap is not mapped here (another node)")
    recv = tt.zeros(rt, (32,), dtype=torch.float32)
    h = tt.handle(rt)

    @torch.compile(backend="eager", fullgraph=True)
    def f(x, out):
        torch.ops.tessera.all_reduce_(x * 2, out, h, "sum", "auto", 0)
        return out + 1

    y = f(torch.full((32,), float(rt.pe)), recv)
    total = 2 * sum(range(rt.n_pes))
    torch.testing.assert_close(y, torch.full((32,), total + 1.0))
    rt.barrier()
    tt.free(recv)


def test_all_reduce_errors_reach_torch_callers(rt):
    recv = tt.zeros(rt, (8,), dtype=torch.float32)
    with pytest.raises(tessera.InvalidArgumentError, match="dtypes differ"):
        tt.all_reduce(rt, torch.ones(8, dtype=torch.int32), recv)
    with pytest.raises(tessera.InvalidArgumentError, match="recv must point into the symmetric heap"):
        tt.all_reduce(rt, torch.ones(8), torch.zeros(8))
    with pytest.raises(tessera.InvalidArgumentError, match="op must be"):
        tt.all_reduce(rt, torch.ones(8), recv, op="mean")
    with pytest.raises(RuntimeError, match="team handle 12345 is unknown"):
        torch.ops.tessera.all_reduce_(torch.ones(8), recv, tt.handle(rt), "sum", "auto", 12345)
    rt.barrier()
    tt.free(recv)


def test_all_reduce_fake_impl_traces(rt):
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode():
        send = torch.empty(16, dtype=torch.bfloat16)
        recv = torch.empty(16, dtype=torch.bfloat16)
        assert torch.ops.tessera.all_reduce_(send, recv, tt.handle(rt), "sum", "auto", 0) is None
        assert recv.shape == (16,)
