import numpy as np
import pytest

import tessera

from conftest import rng_of


@pytest.mark.parametrize("count,dtype,algo", [(1, "int32", "automatic"), (1000, "float32", "automatic"),
                                              (40000, "float32", "automatic"), (3000, "int16", "ring"),
                                              (3000, "uint8", "oneshot")])
def test_all_gather_matches_numpy(rt, count, dtype, algo):
    expected = np.stack([(rng_of(p).integers(0, 100, count)).astype(dtype) for p in range(rt.n_pes)])
    send = expected[rt.pe].copy()
    with rt.zeros((rt.n_pes, count), dtype) as recv:
        for _ in range(3):  # repeated calls on the same buffer
            tessera.ops.all_gather(rt, send, recv, algo=algo)
            rt.synchronize()
            assert np.array_equal(np.from_dlpack(recv), expected)
        rt.barrier()


def test_all_gather_bad_input(rt):
    with rt.zeros((rt.n_pes, 8), "float32") as recv:
        with pytest.raises(tessera.InvalidArgumentError, match="dtypes differ"):
            tessera.ops.all_gather(rt, np.zeros(8, np.int32), recv)
        with pytest.raises(tessera.InvalidArgumentError, match="needs n_pes"):
            tessera.ops.all_gather(rt, np.zeros(9, np.float32), recv)
        with pytest.raises(tessera.InvalidArgumentError, match="contiguous"):
            tessera.ops.all_gather(rt, np.zeros((8, 2), np.float32)[:, 1], recv)
        with pytest.raises(tessera.InvalidArgumentError, match="heap"):
            tessera.ops.all_gather(rt, np.zeros(8, np.float32), np.zeros((rt.n_pes, 8), np.float32))
        with pytest.raises(tessera.InvalidArgumentError, match="algo"):
            tessera.ops.all_gather(rt, np.zeros(8, np.float32), recv, algo="tree")
        # Still usable.
        tessera.ops.all_gather(rt, np.full(8, rt.pe, np.float32), recv)
        rt.synchronize()
        assert (np.from_dlpack(recv)[:, 0] == np.arange(rt.n_pes)).all()
        rt.barrier()


def test_ag_gemm_matches_numpy(rt):
    p = rt.n_pes
    m, n_local, k = 32 * p, 48, 40
    shards = [rng_of(q).standard_normal((m // p, k)).astype(np.float32) for q in range(p)]
    b = rng_of(rt.pe).standard_normal((k, n_local)).astype(np.float32)
    c = np.zeros((m, n_local), np.float32)
    with tessera.ops.AgGemm(rt, m, n_local, k, "float32") as op:
        assert op.variant in ("push", "pull")
        for _ in range(2):
            op.run(shards[rt.pe], b, c)
            rt.synchronize()
            np.testing.assert_allclose(c, np.concatenate(shards) @ b, rtol=1e-4, atol=1e-4)
        with pytest.raises(tessera.InvalidArgumentError, match="a_shard must be"):
            op.run(np.zeros((m // p + 1, k), np.float32), b, c)
        with pytest.raises(tessera.InvalidArgumentError, match="float32"):
            op.run(shards[rt.pe].astype(np.float64), b, c)


def test_gemm_rs_matches_numpy(rt):
    p = rt.n_pes
    m, n, k_local = 16 * p, 64, 24
    a = [rng_of(q).standard_normal((m, k_local)).astype(np.float32) for q in range(p)]
    b = [rng_of(q + 100).standard_normal((k_local, n)).astype(np.float32) for q in range(p)]
    c = np.zeros((m // p, n), np.float32)
    with tessera.ops.GemmRs(rt, m, n, k_local, "float32") as op:
        op.run(a[rt.pe], b[rt.pe], c)
        rt.synchronize()
    total = sum(a[q] @ b[q] for q in range(p))
    rows = m // p
    np.testing.assert_allclose(c, total[rt.pe * rows:(rt.pe + 1) * rows], rtol=1e-4, atol=1e-4)


def test_moe_dispatch_combine_matches_numpy(rt):
    p = rt.n_pes
    tokens, hidden, topk, experts = 12, 16, 2, 2 * p
    gen = rng_of(rt.pe)
    x = gen.standard_normal((tokens, hidden)).astype(np.float32)
    idx = np.stack([gen.choice(experts, topk, replace=False) for _ in range(tokens)]).astype(np.int32)
    idx[0, 1] = -1  # an unused slot
    w = gen.random((tokens, topk)).astype(np.float32)
    with tessera.ops.MoeBuffer(rt, max_tokens_per_pe=tokens, hidden=hidden, topk=topk, num_experts=experts,
                               dtype="float32") as moe:
        h = moe.dispatch(x, idx, w)
        rt.synchronize()
        offsets = np.from_dlpack(h.expert_offsets)
        ex = np.from_dlpack(h.expert_x)
        out = np.zeros_like(ex)
        for i in range(moe.local_experts):
            expert = rt.pe * moe.local_experts + i
            out[offsets[i]:offsets[i + 1]] = ex[offsets[i]:offsets[i + 1]] * (expert + 1)
        y = np.zeros((tokens, hidden), np.float32)
        moe.combine(h, out, y)
        rt.synchronize()
        scale = np.where(idx >= 0, (idx + 1) * w, 0).sum(axis=1)
        np.testing.assert_allclose(y, x * scale[:, None], rtol=1e-5, atol=1e-5)
        with pytest.raises(tessera.InvalidArgumentError, match="topk_idx"):
            moe.dispatch(x, idx.astype(np.float32), w)
        rt.barrier()
