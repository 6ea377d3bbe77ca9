"""The fused GEMM + communication ops in every overlap pattern (GemmAr, GemmAs, and the pattern
options of AgGemm and GemmRs) and all_reduce_rmsnorm, as real processes like test_collectives.py,
against NumPy on every PE's data."""

import numpy as np
import pytest

import tessera

from test_collectives import all_mapped

PATTERNS = ["auto", "bulk_synchronous", "producer_consumer", "workgroup_specialized", "fused_sequential"]
DIRECTIONS = ["auto", "push", "pull"]


@pytest.fixture(scope="module")
def rt():
    runtime = tessera.init(heap_size="64M")
    yield runtime
    runtime.finalize()


@pytest.fixture(scope="module")
def mapped(rt):
    return all_mapped(rt, rt.team_world())


def matrix(seed, rows, cols):
    return np.random.default_rng(seed).standard_normal((rows, cols)).astype(np.float32)


def combos(mapped):
    """(pattern, direction) pairs that apply: bulk_synchronous has no direction, pull needs every
    peer mapped."""
    for pattern in PATTERNS:
        for direction in DIRECTIONS:
            if pattern == "bulk_synchronous" and direction != "auto":
                continue
            if direction == "pull" and not mapped:
                continue
            yield pattern, direction


def refused_across_nodes(op, mapped, a, b, c):
    """GemmAr's and GemmRs's bulk_synchronous pattern runs ops::all_reduce, which reads and writes
    the members' heaps directly: with a peer on another node run() refuses, naming it. True when
    that is the case (and checked)."""
    if op.pattern != "bulk_synchronous" or mapped:
        return False
    with pytest.raises(tessera.InvalidArgumentError, match=r"all_reduce: member PE \d+ is reached through proxy"):
        op.run(a, b, c)
    return True


@pytest.mark.parametrize("comm_blocks", [1, 2])
def test_gemm_ar_every_pattern_matches_numpy(rt, mapped, comm_blocks):
    p = rt.n_pes
    m, n, k_local = 48, 40, 24
    a = [matrix(q, m, k_local) for q in range(p)]
    b = [matrix(q + 100, k_local, n) for q in range(p)]
    expected = sum(a[q].astype(np.float64) @ b[q] for q in range(p))
    for pattern, direction in combos(mapped):
        c = np.zeros((m, n), np.float32)
        with tessera.ops.GemmAr(rt, m, n, k_local, "float32", pattern=pattern, direction=direction,
                                comm_blocks=comm_blocks) as op:
            assert op.pattern != "automatic" and (pattern == "auto" or op.pattern == pattern)
            # bulk_synchronous (what "auto" picks at one PE) leaves the direction to its collective.
            assert op.direction == ("automatic" if op.pattern == "bulk_synchronous" else
                                    (direction if direction != "auto" else op.direction))
            assert op.direction in ("push", "pull") or op.pattern == "bulk_synchronous"
            if refused_across_nodes(op, mapped, a[rt.pe], b[rt.pe], c):
                continue
            for _ in range(2):  # repeated calls, no reset
                op.run(a[rt.pe], b[rt.pe], c)
                rt.synchronize()
                np.testing.assert_allclose(c, expected, rtol=1e-4, atol=1e-4, err_msg=f"{pattern} {direction}")


@pytest.mark.parametrize("comm_blocks", [1, 2])
def test_gemm_as_every_pattern_matches_numpy(rt, mapped, comm_blocks):
    p = rt.n_pes
    m, n_local, k = 40, 24, 32
    a = matrix(7, m, k)  # the same A on every PE (tensor parallelism)
    b = [matrix(q + 200, k, n_local) for q in range(p)]
    expected = np.concatenate([a.astype(np.float64) @ b[q] for q in range(p)], axis=1)
    for pattern, direction in combos(mapped):
        c = np.zeros((m, n_local * p), np.float32)
        with tessera.ops.GemmAs(rt, m, n_local, k, "float32", pattern=pattern, direction=direction,
                                comm_blocks=comm_blocks) as op:
            assert op.pattern != "automatic"
            for _ in range(2):
                op.run(a, b[rt.pe], c)
                rt.synchronize()
                np.testing.assert_allclose(c, expected, rtol=1e-4, atol=1e-4, err_msg=f"{pattern} {direction}")


def test_ag_gemm_and_gemm_rs_every_pattern(rt, mapped):
    p = rt.n_pes
    m, n_local, k = 16 * p, 24, 16
    shards = [matrix(q, m // p, k) for q in range(p)]
    b = matrix(rt.pe + 50, k, n_local)
    for pattern, direction in combos(mapped):
        c = np.zeros((m, n_local), np.float32)
        with tessera.ops.AgGemm(rt, m, n_local, k, "float32", pattern=pattern, direction=direction) as op:
            assert op.pattern != "automatic" and op.direction in ("push", "pull")
            assert pattern == "auto" or op.pattern == pattern
            op.run(shards[rt.pe], b, c)
            rt.synchronize()
            np.testing.assert_allclose(c, np.concatenate(shards) @ b, rtol=1e-4, atol=1e-4,
                                       err_msg=f"AgGemm {pattern} {direction}")
    n, k_local = 32, 16
    a = [matrix(q, m, k_local) for q in range(p)]
    bb = [matrix(q + 100, k_local, n) for q in range(p)]
    rows = m // p
    total = sum(a[q] @ bb[q] for q in range(p))[rt.pe * rows:(rt.pe + 1) * rows]
    for pattern, direction in combos(mapped):
        c = np.zeros((rows, n), np.float32)
        with tessera.ops.GemmRs(rt, m, n, k_local, "float32", pattern=pattern, direction=direction) as op:
            assert op.pattern != "automatic"
            if refused_across_nodes(op, mapped, a[rt.pe], bb[rt.pe], c):
                continue
            op.run(a[rt.pe], bb[rt.pe], c)
            rt.synchronize()
            np.testing.assert_allclose(c, total, rtol=1e-4, atol=1e-4, err_msg=f"GemmRs {pattern} {direction}")


def test_fused_ops_reject_bad_options(rt):
    for make in (lambda **o: tessera.ops.GemmAr(rt, 16, 16, 16, **o),
                 lambda **o: tessera.ops.GemmAs(rt, 16, 16, 16, **o),
                 lambda **o: tessera.ops.GemmRs(rt, 16 * rt.n_pes, 16, 16, **o),
                 lambda **o: tessera.ops.AgGemm(rt, 16 * rt.n_pes, 16, 16, **o)):
        with pytest.raises(tessera.InvalidArgumentError,
                           match="overlap pattern 'tiled' is not one of bulk_synchronous, producer_consumer"):
            make(pattern="tiled")
        with pytest.raises(tessera.InvalidArgumentError, match="communication direction 'up' is not one of push, pull"):
            make(direction="up")
    with pytest.raises(tessera.InvalidArgumentError, match="variant 'push' and direction 'pull' disagree"):
        tessera.ops.AgGemm(rt, 16 * rt.n_pes, 16, 16, variant="push", direction="pull")
    with pytest.raises(tessera.InvalidArgumentError, match="bulk_synchronous"):
        tessera.ops.GemmAr(rt, 16, 16, 16, pattern="bulk_synchronous", direction="push")
    with tessera.ops.GemmAr(rt, 16, 8, 4, "float32") as op:
        with pytest.raises(tessera.InvalidArgumentError, match=r"GemmAr.run: a must be \(16, 4\) float32"):
            op.run(np.zeros((16, 5), np.float32), np.zeros((4, 8), np.float32), np.zeros((16, 8), np.float32))
        with pytest.raises(tessera.InvalidArgumentError, match=r"GemmAr.run: c must be \(16, 8\) float32"):
            op.run(np.zeros((16, 4), np.float32), np.zeros((4, 8), np.float32), np.zeros((16, 8), np.float64))
    with tessera.ops.GemmAs(rt, 16, 8, 4, "float32") as op:
        with pytest.raises(tessera.InvalidArgumentError, match=r"GemmAs.run: c must be \(16, %d\)" % (8 * rt.n_pes)):
            op.run(np.zeros((16, 4), np.float32), np.zeros((4, 8), np.float32), np.zeros((16, 8 * rt.n_pes + 1), np.float32))
    rt.barrier()


def rmsnorm_reference(xs, residual, weight, eps):
    v = sum(x.astype(np.float64) for x in xs) + residual
    return v / np.sqrt((v * v).mean(axis=1, keepdims=True) + eps) * weight


@pytest.mark.parametrize("pattern", ["auto", "bulk_synchronous", "fused_sequential"])
@pytest.mark.parametrize("rows,hidden", [(1, 7), (5, 64), (33, 1000)])
def test_all_reduce_rmsnorm_matches_numpy(rt, mapped, pattern, rows, hidden):
    if not mapped:
        pytest.skip("a peer's heap is not mapped here (another node)")
    p = rt.n_pes
    xs = [matrix(q + 300, rows, hidden) for q in range(p)]
    residual = matrix(rt.pe + 400, rows, hidden)
    weight = matrix(500, 1, hidden)[0]
    y = np.zeros((rows, hidden), np.float32)
    for _ in range(3):  # repeated calls, no reset
        tessera.ops.all_reduce_rmsnorm(rt, xs[rt.pe], residual, weight, y, eps=1e-5, pattern=pattern)
        rt.synchronize()
        np.testing.assert_allclose(y, rmsnorm_reference(xs, residual, weight, 1e-5), rtol=1e-4, atol=1e-4)
    # In place into residual.
    tessera.ops.all_reduce_rmsnorm(rt, xs[rt.pe], residual, weight, residual, eps=1e-5, pattern=pattern)
    rt.synchronize()
    np.testing.assert_allclose(residual, y, rtol=1e-6, atol=1e-6)
    rt.barrier()


def test_all_reduce_rmsnorm_on_a_team_of_even_pes(rt, mapped):
    if not mapped:
        pytest.skip("a peer's heap is not mapped here (another node)")
    even = rt.team_split_strided(rt.team_world(), 0, 2, (rt.n_pes + 1) // 2)
    if even.is_member:
        rows, hidden = 4, 16
        xs = {q: matrix(q + 600, rows, hidden) for q in range(0, rt.n_pes, 2)}
        residual = np.zeros((rows, hidden), np.float32)
        weight = np.ones(hidden, np.float32)
        y = np.zeros_like(residual)
        if even.size < rt.n_pes:
            # H-fused's first slice: the workspace is allocated by the first call, collectively
            # over the job, so a team smaller than the job is refused (on its members) for now.
            with pytest.raises(tessera.InvalidArgumentError,
                               match=r"teams smaller than the job \(%d of %d PEs\) are not supported yet"
                               % (even.size, rt.n_pes)):
                tessera.ops.all_reduce_rmsnorm(rt, xs[rt.pe], residual, weight, y, team=even)
        else:
            tessera.ops.all_reduce_rmsnorm(rt, xs[rt.pe], residual, weight, y, team=even)
            rt.synchronize()
            np.testing.assert_allclose(y, rmsnorm_reference(list(xs.values()), residual, weight, 1e-6),
                                       rtol=1e-4, atol=1e-4)
    rt.barrier()


def test_all_reduce_rmsnorm_bad_arguments(rt):
    x = np.ones((4, 8), np.float32)
    w = np.ones(8, np.float32)
    y = np.zeros((4, 8), np.float32)
    bad = [
        (dict(pattern="producer_consumer"), "all_reduce_rmsnorm: pattern producer_consumer does not apply"),
        (dict(pattern="workgroup_specialized"), "pattern workgroup_specialized does not apply"),
        (dict(pattern="tiled"), "overlap pattern 'tiled' is not one of"),
        (dict(weight=np.ones(6, np.float32)), r"x is \(4, 8\) float32 but weight is \(6,\) float32"),
        (dict(residual=np.ones((4, 7), np.float32)), r"residual is \(4, 7\) float32 but x is \(4, 8\) float32 \(sizes differ\)"),
        (dict(y=np.zeros((4, 8), np.float16)), "dtypes differ"),
        (dict(x=x.astype(np.int32), residual=x.astype(np.int32), weight=w.astype(np.int32),
              y=y.astype(np.int32)), "i32"),
        (dict(eps=0.0), "eps"),
    ]
    for change, message in bad:
        args = dict(x=x, residual=x, weight=w, y=y) | change
        with pytest.raises(tessera.InvalidArgumentError, match=message):
            tessera.ops.all_reduce_rmsnorm(rt, args.pop("x"), args.pop("residual"), args.pop("weight"),
                                           args.pop("y"), **args)
    rt.barrier()
