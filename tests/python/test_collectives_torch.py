"""The collectives as torch custom ops (torch.ops.tessera.*), as real processes like
test_collectives.py: eager on every dtype torch has and NumPy lacks (bfloat16), in place, under
torch.compile, on a team, and their fake implementations."""

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="torch is not installed in this Python (pip install torch)")

import tessera
import tessera.torch as tt

from test_collectives import data_of, reference


def assert_compiled_gradients_match_eager(f, inputs):
    """Backpropagates sum(f(*inputs) ** 2) eagerly, then through torch.compile(f) (aot_eager, one
    graph: the backward traced through the ops' fake impls), each time from fresh copies of
    `inputs`; asserts the inputs' gradients agree. Collective when f is."""
    grads = []
    for g in (f, torch.compile(f, backend="aot_eager", fullgraph=True)):
        leaves = [t.clone().requires_grad_() for t in inputs]
        (g(*leaves) ** 2).sum().backward()
        grads.append([t.grad for t in leaves])
    for eager, compiled in zip(*grads):
        torch.testing.assert_close(compiled, eager, rtol=1e-5, atol=1e-5)


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
    node = rt.team_node()  # mapped members: only the checks under test can fail
    with pytest.raises(tessera.InvalidArgumentError, match="dtypes differ"):
        tt.all_reduce(rt, torch.ones(8, dtype=torch.int32), recv)
    with pytest.raises(tessera.InvalidArgumentError, match="recv must point into the symmetric heap"):
        tt.all_reduce(rt, torch.ones(8), torch.zeros(8), team=node)
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


def test_data_collective_custom_ops(rt, mapped):
    if not mapped:
        pytest.skip("a peer's heap is not mapped here (another node)")
    p, count = rt.n_pes, 33
    send = torch.arange(p * count, dtype=torch.float32) + 1000 * rt.pe
    recv = tt.zeros(rt, (p * count,), dtype=torch.float32)
    # reduce_scatter: block my rank of the sum over PEs.
    tt.reduce_scatter(rt, send, recv[:count])
    expected = sum(torch.arange(p * count, dtype=torch.float32) + 1000 * q for q in range(p))
    assert torch.equal(recv[:count], expected[rt.pe * count:(rt.pe + 1) * count])
    rt.barrier()
    # all_to_all: block r from rank r.
    tt.all_to_all(rt, send, recv)
    expected = torch.cat([(torch.arange(p * count, dtype=torch.float32) + 1000 * r)[rt.pe * count:(rt.pe + 1) * count]
                          for r in range(p)])
    assert torch.equal(recv, expected)
    rt.barrier()
    # broadcast from the last PE, the others passing None.
    root = p - 1
    tt.broadcast(rt, send if rt.pe == root else None, recv, root=root)
    assert torch.equal(recv, torch.arange(p * count, dtype=torch.float32) + 1000 * root)
    rt.barrier()
    # all_to_all_v: rank s sends s + 1 elements to each rank.
    counts = torch.full((p,), rt.pe + 1, dtype=torch.int64)
    recv_counts = torch.zeros(p, dtype=torch.int64)
    recv_offsets = torch.zeros(p, dtype=torch.int64)
    tt.all_to_all_v(rt, torch.full((p * (rt.pe + 1),), float(rt.pe)), counts, recv, recv_counts, recv_offsets)
    assert recv_counts.tolist() == [s + 1 for s in range(p)]
    expected = torch.cat([torch.full((s + 1,), float(s)) for s in range(p)])
    assert torch.equal(recv[:len(expected)], expected)
    rt.barrier()
    tt.free(recv)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_all_reduce_rmsnorm_custom_op(rt, mapped, dtype):
    if not mapped:
        pytest.skip("a peer's heap is not mapped here (another node)")
    rows, hidden = 6, 128
    g = [torch.Generator().manual_seed(q) for q in range(rt.n_pes)]
    xs = [torch.randn((rows, hidden), generator=gen).to(dtype) for gen in g]
    residual = torch.randn((rows, hidden), generator=torch.Generator().manual_seed(99)).to(dtype)
    weight = torch.rand(hidden, generator=torch.Generator().manual_seed(98)).to(dtype)
    y = tt.all_reduce_rmsnorm(rt, xs[rt.pe], residual, weight, eps=1e-5)
    v = sum(x.float() for x in xs) + residual.float()
    ref = v * torch.rsqrt((v * v).mean(dim=1, keepdim=True) + 1e-5) * weight.float()
    tol = 1e-4 if dtype == torch.float32 else 3e-2
    assert y.dtype == dtype and y.shape == (rows, hidden)
    torch.testing.assert_close(y.float(), ref, rtol=tol, atol=tol)


def test_gemm_ar_and_gemm_as_custom_ops_eager_and_compiled(rt, mapped):
    if not mapped:
        pytest.skip("a peer's heap is not mapped here: GemmAr's bulk_synchronous pattern needs it")
    p = rt.n_pes
    m, n, k = 16, 24, 8
    a = [torch.from_numpy(np.random.default_rng(q).standard_normal((m, k)).astype(np.float32)) for q in range(p)]
    b = [torch.from_numpy(np.random.default_rng(q + 9).standard_normal((k, n)).astype(np.float32)) for q in range(p)]
    c = tt.gemm_ar(rt, a[rt.pe], b[rt.pe], pattern="bulk_synchronous")
    torch.testing.assert_close(c, sum(a[q] @ b[q] for q in range(p)), rtol=1e-4, atol=1e-4)
    c = tt.gemm_as(rt, a[0], b[rt.pe])
    assert c.shape == (m, n * p)
    torch.testing.assert_close(c, torch.cat([a[0] @ b[q] for q in range(p)], dim=1), rtol=1e-4, atol=1e-4)
    h = tt.handle(rt)

    @torch.compile(backend="eager", fullgraph=True)
    def f(x, w):
        return torch.ops.tessera.gemm_ar(x * 2, w, h, "auto", "auto", 1) + 1

    torch.testing.assert_close(f(a[rt.pe], b[rt.pe]), 2 * sum(a[q] @ b[q] for q in range(p)) + 1,
                               rtol=1e-4, atol=1e-4)
    tt.release(rt)


def test_new_fake_impls_give_the_shapes(rt):
    from torch._subclasses.fake_tensor import FakeTensorMode

    h = tt.handle(rt)
    p = rt.n_pes
    with FakeTensorMode():
        a, b = torch.empty(8, 4), torch.empty(4, 6)
        assert torch.ops.tessera.gemm_ar(a, b, h).shape == (8, 6)
        assert torch.ops.tessera.gemm_as(a, b, h).shape == (8, 6 * p)
        assert torch.ops.tessera.ag_gemm(a, b, h, "bulk_synchronous", "auto", 2).shape == (8 * p, 6)
        x = torch.empty(3, 16, dtype=torch.bfloat16)
        y = torch.ops.tessera.all_reduce_rmsnorm(x, x, torch.empty(16, dtype=torch.bfloat16), h)
        assert y.shape == (3, 16) and y.dtype == torch.bfloat16
        s = torch.empty(4 * p)
        assert torch.ops.tessera.reduce_scatter_(s, torch.empty(4), h) is None
        assert torch.ops.tessera.all_to_all_(s, torch.empty(4 * p), h) is None
        assert torch.ops.tessera.broadcast_(None, s, h, 0) is None
        cnt = torch.empty(p, dtype=torch.int64)
        assert torch.ops.tessera.all_to_all_v_(s, cnt, s, cnt, cnt, h) is None


def _normal(seed, *shape):
    return torch.randn(shape, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)


def _fused_gemm_case(rt, name):
    """Every PE's inputs a_q, b_q and output gradient g_q (float64, the same on every PE by seed),
    the op to call, and the float64 reference: the output each PE sees as a function of every PE's
    inputs. The backward gives the gradient of the sum over PEs of <g_q, C_q> (replicated outputs
    too: each PE's copy has its own gradient g_q)."""
    p, r, k, n = rt.n_pes, 3, 8, 6
    if name == "ag_gemm":  # C_q = all_gather(A) @ B_q
        a = [_normal(q, r, k) for q in range(p)]
        b = [_normal(100 + q, k, n) for q in range(p)]
        g = [_normal(200 + q, p * r, n) for q in range(p)]
        out = lambda a, b, q: torch.cat(a) @ b[q]
    elif name == "gemm_rs":  # C_q = rows q of sum over PEs of A_s @ B_s
        a = [_normal(q, p * r, k) for q in range(p)]
        b = [_normal(100 + q, k, n) for q in range(p)]
        g = [_normal(200 + q, r, n) for q in range(p)]
        out = lambda a, b, q: sum(a[s] @ b[s] for s in range(p))[q * r:(q + 1) * r]
    elif name == "gemm_ar":  # C = sum over PEs of A_s @ B_s, replicated
        a = [_normal(q, r, k) for q in range(p)]
        b = [_normal(100 + q, k, n) for q in range(p)]
        g = [_normal(200 + q, r, n) for q in range(p)]
        out = lambda a, b, q: sum(a[s] @ b[s] for s in range(p))
    else:  # gemm_as: C = [A_0 @ B_0 ... A_{P-1} @ B_{P-1}], replicated
        a = [_normal(q, r, k) for q in range(p)]
        b = [_normal(100 + q, k, n) for q in range(p)]
        g = [_normal(200 + q, r, n * p) for q in range(p)]
        out = lambda a, b, q: torch.cat([a[s] @ b[s] for s in range(p)], dim=1)
    return a, b, g, out, getattr(tt, name)


def _reference_grads(rt, a, b, g, out):
    a64 = [x.clone().requires_grad_() for x in a]
    b64 = [x.clone().requires_grad_() for x in b]
    sum((out(a64, b64, q) * g[q]).sum() for q in range(rt.n_pes)).backward()
    return a64[rt.pe].grad, b64[rt.pe].grad


@pytest.mark.parametrize("name", ["ag_gemm", "gemm_rs", "gemm_ar", "gemm_as"])
def test_fused_gemm_backward_matches_float64_autograd(rt, mapped, name):
    """The autograd of the fused GEMMs in float32 against torch's float64 autograd of the same
    function of every PE's inputs (the ops have no float64: gradcheck's own float64 check does not
    apply), eagerly; the gradients keep the inputs' dtype (bfloat16 too)."""
    if not mapped:
        pytest.skip("a peer's heap is not mapped here: GemmAr's and GemmRs's auto pattern may need it")
    a, b, g, out, op = _fused_gemm_case(rt, name)
    me = rt.pe
    want_a, want_b = _reference_grads(rt, a, b, g, out)
    x = a[me].float().requires_grad_()
    w = b[me].float().requires_grad_()
    c = op(rt, x, w)
    torch.testing.assert_close(c.double(), out(a, b, me), rtol=1e-4, atol=1e-4)
    c.backward(g[me].float())
    torch.testing.assert_close(x.grad.double(), want_a, rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(w.grad.double(), want_b, rtol=1e-4, atol=1e-4)
    # Only the weight's gradient (the activation frozen), and bfloat16 inputs.
    xb = a[me].to(torch.bfloat16)
    wb = b[me].to(torch.bfloat16).requires_grad_()
    op(rt, xb, wb).backward(g[me].float())
    assert wb.grad.dtype == torch.bfloat16 and xb.grad is None
    torch.testing.assert_close(wb.grad.double(), want_b, rtol=3e-2, atol=6e-2)
    rt.barrier()
    tt.release(rt)


def test_fused_gemm_backward_under_torch_compile(rt, mapped):
    """ag_gemm then gemm_rs (a tensor-parallel MLP's up and down projections) compiled with
    aot_autograd (backend aot_eager: the backward graph is traced through the fake impls) give
    eager's gradients."""
    if not mapped:
        pytest.skip("a peer's heap is not mapped here: GemmRs's auto pattern may need it")
    p, me, r, k, n = rt.n_pes, rt.pe, 2, 8, 4
    x0 = _normal(me, r, k).float()
    w1_0 = _normal(50 + me, k, n).float()
    w2_0 = _normal(90 + me, n, k).float()
    h = tt.handle(rt)

    def mlp(x, w1, w2):
        up = torch.ops.tessera.ag_gemm(x, w1, h, "auto", "auto", 1)  # (p r, n): this PE's columns
        return torch.ops.tessera.gemm_rs(torch.relu(up), w2, h, "auto", "auto", 1)  # (r, k)

    assert_compiled_gradients_match_eager(mlp, (x0, w1_0, w2_0))
    rt.barrier()
    tt.release(rt)


def test_all_gather_rows_stacks_every_pe_and_stages_ordinary_tensors(rt, mapped):
    if not mapped:
        pytest.skip("a peer's heap is not mapped here (another node)")
    x = torch.full((2, 3), float(rt.pe))  # ordinary memory: staged through the heap
    y = torch.ops.tessera.all_gather_rows(x, tt.handle(rt))
    assert y.shape == (2 * rt.n_pes, 3)
    assert torch.equal(y, torch.arange(rt.n_pes, dtype=torch.float32).repeat_interleave(2)[:, None].expand(-1, 3))
    z = torch.ops.tessera.all_gather_rows(x + 1, tt.handle(rt))  # the cached staging buffer, reused
    assert torch.equal(z, y + 1) and torch.equal(y[0], torch.zeros(3))
    rt.barrier()
    tt.release(rt)
