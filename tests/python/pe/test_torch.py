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


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_gemm_rs_custom_op_eager(rt, dtype):
    p = rt.n_pes
    m, n, k_local = 16 * p, 32, 24
    a = [torch.from_numpy(rng_of(q).standard_normal((m, k_local)).astype(np.float32)).to(dtype)
         for q in range(p)]
    b = [torch.from_numpy(rng_of(q + 100).standard_normal((k_local, n)).astype(np.float32)).to(dtype)
         for q in range(p)]
    c = tt.gemm_rs(rt, a[rt.pe], b[rt.pe])
    assert c.shape == (m // p, n) and c.dtype == torch.float32
    total = sum(a[q].float() @ b[q].float() for q in range(p))
    rows = m // p
    tol = 1e-4 if dtype == torch.float32 else 5e-2 * k_local ** 0.5
    torch.testing.assert_close(c, total[rt.pe * rows:(rt.pe + 1) * rows], rtol=tol, atol=tol)
    tt.release(rt)


def test_moe_custom_ops_eager(rt):
    p = rt.n_pes
    tokens, hidden, topk, experts = 12, 16, 2, 2 * p
    g = torch.Generator().manual_seed(rt.pe)
    x = torch.randn((tokens, hidden), generator=g)
    idx = torch.stack([torch.randperm(experts, generator=g)[:topk] for _ in range(tokens)]).int()
    w = torch.rand((tokens, topk), generator=g)
    ex, counts = tt.moe_dispatch(rt, x, idx, w, num_experts=experts)
    local = experts // p
    assert counts.shape == (local,) and ex.shape == (int(counts.sum()), hidden)
    out = torch.empty_like(ex)
    lo = 0
    for i in range(local):  # expert e scales its rows by e + 1
        hi = lo + int(counts[i])
        out[lo:hi] = ex[lo:hi] * (rt.pe * local + i + 1)
        lo = hi
    y = tt.moe_combine(rt, out, w, num_experts=experts)
    scale = ((idx.float() + 1) * w).sum(dim=1)
    torch.testing.assert_close(y, x * scale[:, None], rtol=1e-5, atol=1e-5)
    tt.release(rt)


def test_gemm_rs_and_moe_fake_impls(rt):
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.fx.experimental.symbolic_shapes import ShapeEnv

    h = tt.handle(rt)
    with FakeTensorMode(shape_env=ShapeEnv()):
        c = torch.ops.tessera.gemm_rs(torch.empty(8 * rt.n_pes, 4), torch.empty(4, 6), h)
        assert c.shape == (8, 6) and c.dtype == torch.float32
        x = torch.empty(5, 16)
        ex, counts = torch.ops.tessera.moe_dispatch(x, torch.empty(5, 2, dtype=torch.int32),
                                                    torch.empty(5, 2), h, 2 * rt.n_pes, 5)
        assert ex.shape[1] == 16 and counts.shape == (2,) and counts.dtype == torch.int64
        y = torch.ops.tessera.moe_combine(torch.empty(7, 16), torch.empty(5, 2), h, 2 * rt.n_pes, 5)
        assert y.shape == (5, 16)
