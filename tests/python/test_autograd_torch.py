"""Autograd of the functional collectives and all_reduce_rmsnorm (torch.ops.tessera.*), as real
processes like test_collectives.py (P = 1 to 5, and under torchrun).

Every PE's output has its own gradient and a backward gives the gradient, for this PE's inputs, of
the sum over PEs of their losses. Two checks:
- torch.autograd.gradcheck in float64 (float64 moves as its bits; its sums are added after the
  move, so this checks the ops' autograd, not the reduction kernels). gradcheck needs one function every PE
  evaluates alike, so it is F(every PE's input) = every PE's output, stacked: each PE holds all
  inputs, takes its own (_Mine, whose backward gathers every PE's input gradient) and gathers
  every PE's output (_Every, whose backward keeps this PE's block). Every PE perturbs the same
  element at the same time, so each evaluation is one collective call on all of them.
- float32 (where the reduction kernels add, and the fused RMSNorm, which has no float64):
  gradients against torch's float64 autograd of the same function of every PE's inputs.
"""

import pytest

torch = pytest.importorskip("torch", reason="torch is not installed in this Python (pip install torch)")

import tessera
import tessera.torch as tt

from test_collectives_torch import assert_compiled_gradients_match_eager


@pytest.fixture(autouse=True)
def _one_node(mapped):
    if not mapped:
        pytest.skip("a peer's heap is not mapped here (another node): the collectives refuse it")


def _normal(seed, *shape, dtype=torch.float64):
    return torch.randn(shape, generator=torch.Generator().manual_seed(seed), dtype=dtype)


class _Mine(torch.autograd.Function):
    """Every PE's input (stacked, the same on every PE) -> this PE's; the gradient of the stack is
    every PE's gradient, gathered."""

    @staticmethod
    def forward(ctx, x_all, h, pe):
        ctx.h = h
        return x_all[pe].clone()

    @staticmethod
    def backward(ctx, g):
        return torch.ops.tessera.all_gather_rows(g.contiguous()[None], ctx.h), None, None


class _Every(torch.autograd.Function):
    """This PE's output -> every PE's, stacked; the gradient of this PE's is its block."""

    @staticmethod
    def forward(ctx, y, h, pe):
        ctx.pe = pe
        return torch.ops.tessera.all_gather_rows(y.contiguous()[None], h)

    @staticmethod
    def backward(ctx, g):
        return g[ctx.pe].clone(), None, None


def _counts(p, pe):
    """Rows PE pe sends to each PE: uneven (1 to p) and different on every PE, yet every PE sends
    and receives the same total, so each PE's output has the same shape."""
    return torch.tensor([(pe + q) % p + 1 for q in range(p)], dtype=torch.int64)


def _moving_ops(p):
    """name -> (the input shape on every PE, this PE's output from its input)."""
    r, k = 3, 2
    rows_v = sum(range(1, p + 1))
    return {
        "all_gather_rows": ((r, k), lambda x, h, pe: torch.ops.tessera.all_gather_rows(x, h)),
        "reduce_scatter_rows": ((p * r, k), lambda x, h, pe: torch.ops.tessera.reduce_scatter_rows(x, h)),
        "all_reduce_sum": ((r, k), lambda x, h, pe: torch.ops.tessera.all_reduce_sum(x, h, 0)),
        "all_to_all_rows": ((p * r, k), lambda x, h, pe: torch.ops.tessera.all_to_all_rows(x, h)),
        "broadcast_from": ((r, k), lambda x, h, pe: torch.ops.tessera.broadcast_from(x, h, p - 1)),
        "all_to_all_v_rows": ((rows_v, k), lambda x, h, pe: torch.ops.tessera.all_to_all_v_rows(
            x, _counts(p, pe), h)[0]),
    }


@pytest.mark.parametrize("name", ["all_gather_rows", "reduce_scatter_rows", "all_reduce_sum",
                                  "all_to_all_rows", "broadcast_from", "all_to_all_v_rows"])
def test_gradcheck_float64(rt, name):
    p, me, h = rt.n_pes, rt.pe, tt.handle(rt)
    shape, op = _moving_ops(p)[name]
    x_all = _normal(7, p, *shape).requires_grad_()  # every PE's input, the same on every PE
    f = lambda x: _Every.apply(op(_Mine.apply(x, h, me), h, me), h, me)
    assert torch.autograd.gradcheck(f, (x_all,), eps=1e-6, atol=1e-8, rtol=1e-7)
    rt.barrier()


def _reference(name, p, q, xs):
    """PE q's output in float64 from every PE's inputs xs (lists by PE)."""
    if name == "reduce_scatter_rows":
        r = xs[0][0].shape[0] // p
        return sum(x[0] for x in xs)[q * r:(q + 1) * r]
    if name == "all_reduce_sum":
        return sum(x[0] for x in xs)
    if name == "all_gather_rows":
        return torch.cat([x[0] for x in xs])
    if name == "all_to_all_rows":
        r = xs[0][0].shape[0] // p
        return torch.cat([x[0][q * r:(q + 1) * r] for x in xs])
    if name == "broadcast_from":
        return xs[p - 1][0] + 0
    if name == "all_to_all_v_rows":
        blocks = []
        for s, x in enumerate(xs):
            c = _counts(p, s)
            start = int(c[:q].sum())
            blocks.append(x[0][start:start + int(c[q])])
        return torch.cat(blocks)
    # all_reduce_rmsnorm: x, residual, weight
    v = sum(x[0] for x in xs) + xs[q][1]
    return v / torch.sqrt(v.pow(2).mean(-1, keepdim=True) + 1e-6) * xs[q][2]


def _call(name, p, pe, h, args):
    if name == "all_reduce_rmsnorm":
        return torch.ops.tessera.all_reduce_rmsnorm(*args, h, 1e-6, "auto", 0)
    return _moving_ops(p)[name][1](args[0], h, pe)


def _inputs(name, p, pe):
    r, k = 3, 4
    if name == "all_reduce_rmsnorm":
        return [_normal(pe, r, k), _normal(50 + pe, r, k), 1 + 0.1 * _normal(90 + pe, k)]
    return [_normal(pe, *_moving_ops(p)[name][0])]


@pytest.mark.parametrize("name", ["reduce_scatter_rows", "all_reduce_sum", "all_reduce_rmsnorm", "all_gather_rows",
                                  "all_to_all_rows", "broadcast_from", "all_to_all_v_rows"])
def test_float32_backward_matches_float64_autograd(rt, name):
    p, me, h = rt.n_pes, rt.pe, tt.handle(rt)
    xs = [[t.clone().requires_grad_() for t in _inputs(name, p, q)] for q in range(p)]
    outs = [_reference(name, p, q, xs) for q in range(p)]
    gs = [_normal(300 + q, *outs[q].shape) for q in range(p)]
    sum((o * g).sum() for o, g in zip(outs, gs)).backward()
    mine = [t.detach().float().requires_grad_() for t in xs[me]]
    y = _call(name, p, me, h, mine)
    torch.testing.assert_close(y.double(), outs[me].detach(), rtol=1e-5, atol=1e-5)
    y.backward(gs[me].float())
    for got, want in zip(mine, xs[me]):
        assert got.grad is not None and got.grad.dtype == torch.float32
        want = torch.zeros_like(want) if want.grad is None else want.grad  # broadcast's non-roots
        torch.testing.assert_close(got.grad.double(), want, rtol=1e-4, atol=1e-4)
    rt.barrier()


def test_all_reduce_rmsnorm_backward_bfloat16_and_frozen_inputs(rt):
    """bfloat16 inputs get bfloat16 gradients; an input that needs none gets none."""
    p, me, h = rt.n_pes, rt.pe, tt.handle(rt)
    xs = [[t.clone().requires_grad_() for t in _inputs("all_reduce_rmsnorm", p, q)] for q in range(p)]
    outs = [_reference("all_reduce_rmsnorm", p, q, xs) for q in range(p)]
    gs = [_normal(300 + q, *outs[q].shape) for q in range(p)]
    sum((o * g).sum() for o, g in zip(outs, gs)).backward()
    x, res, w = (t.detach().to(torch.bfloat16) for t in xs[me])
    x.requires_grad_()
    w.requires_grad_()
    tt.all_reduce_rmsnorm(rt, x, res, w).backward(gs[me].to(torch.bfloat16))
    assert x.grad.dtype == w.grad.dtype == torch.bfloat16 and res.grad is None
    torch.testing.assert_close(x.grad.double(), xs[me][0].grad, rtol=5e-2, atol=5e-2)
    torch.testing.assert_close(w.grad.double(), xs[me][2].grad, rtol=5e-2, atol=1e-1)
    rt.barrier()


def test_functional_collectives_backward_under_torch_compile(rt):
    """A sequence-parallel chain (gather, a local op, reduce-scatter, all-reduce, all-to-all)
    compiled with aot_autograd (backend aot_eager: the backward traced through the fake impls)
    gives eager's gradients."""
    p, me, h = rt.n_pes, rt.pe, tt.handle(rt)
    x0 = _normal(me, 2, 4, dtype=torch.float32)
    w0 = _normal(40 + me, 4, 4, dtype=torch.float32)

    def chain(x, w):
        full = torch.ops.tessera.all_gather_rows(x, h)  # (2p, 4)
        part = torch.ops.tessera.reduce_scatter_rows(torch.tanh(full @ w), h)  # (2, 4)
        mixed = torch.ops.tessera.all_to_all_rows(torch.cat([part] * p), h)
        return torch.ops.tessera.all_reduce_sum(mixed * mixed, h, 0)

    grads = []
    for f in (chain, torch.compile(chain, backend="aot_eager", fullgraph=True)):
        x, w = x0.clone().requires_grad_(), w0.clone().requires_grad_()
        f(x, w).sum().backward()
        grads.append((x.grad, w.grad))
    for eager, compiled in zip(*grads):
        torch.testing.assert_close(compiled, eager, rtol=1e-5, atol=1e-5)
    rt.barrier()


def test_functional_collectives_refuse_bad_input(rt):
    p, h = rt.n_pes, tt.handle(rt)
    if p > 1:
        with pytest.raises(ValueError, match="must split into"):
            torch.ops.tessera.reduce_scatter_rows(torch.ones(p * 2 + 1, 3), h)
        with pytest.raises(ValueError, match="must split into"):
            torch.ops.tessera.all_to_all_rows(torch.ones(p + 1), h)
    with pytest.raises(ValueError, match="send_rows must be"):
        tt.all_to_all_v_rows(rt, torch.ones(3, 2), torch.ones(p + 1, dtype=torch.int64))
    with pytest.raises(ValueError, match="send_rows must be"):
        tt.all_to_all_v_rows(rt, torch.ones(3, 2), torch.full((p,), 5, dtype=torch.int64))
    with pytest.raises(tessera.InvalidArgumentError, match="dtype float64 is not supported"):
        torch.ops.tessera.all_reduce_rmsnorm(*(torch.ones(2, 4, dtype=torch.float64),) * 2,
                                             torch.ones(4, dtype=torch.float64), h, 1e-6, "auto", 0)
    with pytest.raises(TypeError, match="cannot be moved"):
        tt.all_gather_rows(rt, torch.ones(4, dtype=torch.uint8))
    # The Python names run the same ops.
    x = torch.full((2, 3), float(rt.pe))
    assert torch.equal(tt.reduce_scatter_rows(rt, tt.all_gather_rows(rt, x)), x * p)
    assert torch.equal(tt.all_reduce_sum(rt, x), torch.full((2, 3), float(sum(range(p)))))
    assert torch.equal(tt.broadcast_from(rt, x, root=p - 1), torch.full((2, 3), float(p - 1)))
    assert torch.equal(tt.all_to_all_rows(rt, x.repeat(p, 1)),
                       torch.arange(p, dtype=torch.float32).repeat_interleave(2)[:, None].expand(-1, 3))
    rt.barrier()


def _moe_case(p, q):
    """PE q's tokens, routing (two experts a token, the last token one, its other slot -1) and
    weights, float64; every PE's experts apply that PE's matrix."""
    tokens, hidden, topk, experts = 5, 4, 2, 2 * p
    g = torch.Generator().manual_seed(10 + q)
    idx = torch.stack([torch.randperm(experts, generator=g)[:topk] for _ in range(tokens)])
    idx[-1, 1] = -1
    x = torch.randn((tokens, hidden), generator=g, dtype=torch.float64)
    w = torch.rand((tokens, topk), generator=g, dtype=torch.float64)
    m = torch.randn((hidden, hidden), generator=g, dtype=torch.float64)
    return x, idx, w, m, experts


def test_moe_dispatch_combine_backward_matches_float64_autograd(rt):
    """x -> dispatch -> each PE's experts multiply by its matrix -> combine, float32, against
    torch's float64 autograd of the same function of every PE's tokens, weights and matrices:
    the gradients of the tokens (dispatch's backward), of the routing weights and of the expert
    outputs (combine's)."""
    p, me = rt.n_pes, rt.pe
    cases = [_moe_case(p, q) for q in range(p)]
    local = cases[0][4] // p
    xs = [c[0].clone().requires_grad_() for c in cases]
    ws = [c[2].clone().requires_grad_() for c in cases]
    ms = [c[3].clone().requires_grad_() for c in cases]
    gs = [_normal(400 + q, 5, 4) for q in range(p)]
    loss = 0
    for q, (_, idx, _, _, _) in enumerate(cases):
        y = torch.zeros(5, 4, dtype=torch.float64)
        for k in range(2):
            e = idx[:, k]
            for t in range(5):
                if e[t] >= 0:
                    y[t] = y[t] + ws[q][t, k] * (xs[q][t] @ ms[int(e[t]) // local])
        loss = loss + (y * gs[q]).sum()
    loss.backward()
    x, idx, w, m, experts = cases[me]
    x, w, m = (t.float().requires_grad_() for t in (x, w, m))
    ex, counts = tt.moe_dispatch(rt, x, idx, w, num_experts=experts)
    y = tt.moe_combine(rt, ex @ m, w, num_experts=experts)
    y.backward(gs[me].float())
    for got, want in ((x, xs[me]), (w, ws[me]), (m, ms[me])):
        torch.testing.assert_close(got.grad.double(), want.grad, rtol=1e-4, atol=1e-4)
    # The backward's dispatches left the forward's handle stale: a combine now raises, not reweighs.
    with pytest.raises(tessera.InvalidArgumentError, match="latest dispatch"):
        tt.moe_combine(rt, (ex @ m).detach(), w.detach(), num_experts=experts)
    rt.barrier()


def test_moe_backward_refuses_a_replaced_routing_and_other_weights(rt):
    p = rt.n_pes
    x, idx, w, m, experts = _moe_case(p, rt.pe)
    x, w = x.float().requires_grad_(), w.float()
    ex, _ = tt.moe_dispatch(rt, x, idx, w, num_experts=experts)
    with pytest.raises(ValueError, match="not the one moe_dispatch sent"):
        tt.moe_combine(rt, ex.detach(), w * 2, num_experts=experts)
    y = tt.moe_combine(rt, ex, w, num_experts=experts)
    tt.moe_dispatch(rt, x.detach(), idx, w, num_experts=experts)  # a second forward dispatch
    with pytest.raises(RuntimeError, match="replaced it"):
        y.sum().backward()
    rt.barrier()


def test_moe_backward_under_torch_compile(rt):
    """dispatch -> experts -> combine compiled with aot_autograd (backend aot_eager: the backward
    traced through the backward ops' fake impls) gives eager's gradients."""
    x0, idx, w0, m0, experts = _moe_case(rt.n_pes, rt.pe)

    def layer(x, w, m):
        ex, _ = tt.moe_dispatch(rt, x, idx, w, num_experts=experts)
        return tt.moe_combine(rt, ex @ m, w, num_experts=experts)

    assert_compiled_gradients_match_eager(layer, [t.float() for t in (x0, w0, m0)])
    rt.barrier()
