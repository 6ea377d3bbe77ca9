import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="torch is not installed in this Python (pip install torch)")

import tessera
import tessera.torch as tt

from conftest import rng_of


def test_symmetric_tensor_zero_copy_seen_by_peers_get(rt):
    left = (rt.pe - 1) % rt.n_pes
    t = tt.zeros(rt, (4, 16), dtype=torch.bfloat16)
    assert t.dtype == torch.bfloat16 and t.device.type == "cpu"
    t.fill_(rt.pe + 0.5)  # a write through the torch view
    rt.barrier()
    got = torch.empty((4, 16), dtype=torch.bfloat16)
    rt.get(got, t, left)
    assert torch.equal(got, torch.full((4, 16), left + 0.5, dtype=torch.bfloat16))
    rt.barrier()
    tt.free(t)


def test_all_gather_custom_op(rt):
    recv = tt.zeros(rt, (rt.n_pes, 32), dtype=torch.float32)
    tt.all_gather(rt, torch.full((32,), float(rt.pe)), recv)
    assert torch.equal(recv[:, 0], torch.arange(rt.n_pes, dtype=torch.float32))
    rt.barrier()
    tt.free(recv)


def _shards(rt, m, k, dtype):
    return [torch.from_numpy(rng_of(q).standard_normal((m // rt.n_pes, k)).astype(np.float32)).to(dtype)
            for q in range(rt.n_pes)]


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_ag_gemm_custom_op_eager(rt, dtype):
    m, n_local, k = 16 * rt.n_pes, 32, 24
    shards = _shards(rt, m, k, dtype)
    b = torch.from_numpy(rng_of(rt.pe + 50).standard_normal((k, n_local)).astype(np.float32)).to(dtype)
    c = tt.ag_gemm(rt, shards[rt.pe], b)
    ref = torch.cat(shards).float() @ b.float()
    torch.testing.assert_close(c, ref, rtol=1e-4, atol=1e-4)


def test_ag_gemm_under_torch_compile(rt):
    m, n_local, k = 8 * rt.n_pes, 16, 8
    shards = _shards(rt, m, k, torch.float32)
    b = torch.ones((k, n_local))

    h = tt.handle(rt)  # an int: what a compiled graph can carry

    @torch.compile(backend="eager", fullgraph=True)
    def f(a, w):
        return torch.ops.tessera.ag_gemm(a * 2, w, h) + 1

    c = f(shards[rt.pe], b)
    torch.testing.assert_close(c, (torch.cat(shards) * 2) @ b + 1, rtol=1e-4, atol=1e-4)
    tt.release(rt)


def test_fake_impl_shapes(rt):
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode():
        a = torch.empty((4, 8))
        b = torch.empty((8, 3))
        c = torch.ops.tessera.ag_gemm(a, b, tt.handle(rt))
    assert tuple(c.shape) == (4 * rt.n_pes, 3) and c.dtype == torch.float32
