"""Capture and replay from Python (`with rt.capture() as g:`, g.replay()), as real processes like
test_collectives.py: every PE runs this session, so each PE captures and replays the same calls in
the same order. Each op is called once (its first call agrees with the other PEs on the host and
cannot be captured), captured once, then replayed many times with its inputs rewritten in place
before every replay, and every replay's result is checked: a replay must read the inputs as they
are when it runs, not as they were at capture. The last test finalizes the module's runtime."""

import numpy as np
import pytest

import tessera

from test_collectives import all_mapped

REPLAYS = 1000  # each replay is checked; the whole module stays well within a minute at P <= 4
COUNT = 48  # elements per PE block: small, so the replays measure the path, not the copies
SENTINEL = -1000.0  # recv is reset to this before each replay: a replay that did not run fails


@pytest.fixture(scope="module")
def rt():
    runtime = tessera.init(heap_size="64M")
    yield runtime
    runtime.finalize()


@pytest.fixture(scope="module")
def mapped(rt):
    return all_mapped(rt, rt.team_world())


@pytest.fixture
def needs_mapped(mapped):
    if not mapped:
        pytest.skip("a peer's heap is not mapped here (another node): the collectives refuse")


def block(pe, replay, count=COUNT):
    """PE pe's data for a replay: small integers, exact in float32 sums over five PEs."""
    return ((np.arange(count) * (pe + 3) + replay * 7 + pe) % 17 - 8).astype(np.float32)


def replay_checked(rt, g, rewrite, check, replays=REPLAYS):
    """Replays g `replays` times: rewrite(i) sets the inputs, g.replay(), rt.synchronize(), then
    check(i). Returns the number of replays checked."""
    assert g.captured and len(g) > 0 and g.size == len(g)
    checked = 0
    for i in range(1, replays + 1):
        rewrite(i)
        g.replay()
        rt.synchronize()
        check(i)
        checked += 1
    return checked


def test_rt_stream_names_the_one_stream_ops_run_on(rt):
    assert rt.stream == rt.stream and hash(rt.stream) == hash(rt.stream)
    assert rt.stream.pe == rt.pe and not rt.stream.capturing
    with rt.capture() as g:
        assert rt.stream.capturing and g.stream == rt.stream
        with pytest.raises(tessera.InvalidArgumentError, match="the capture has not ended"):
            g.replay()
    assert not rt.stream.capturing and g.captured and len(g) == 0
    rt.stream.synchronize()


def test_all_reduce_replay_reads_inputs_rewritten_in_place(rt, needs_mapped):
    send, recv = rt.empty(COUNT, "float32"), rt.empty(COUNT, "float32")
    s, r = np.from_dlpack(send), np.from_dlpack(recv)
    s[:] = block(rt.pe, 0)
    tessera.ops.all_reduce(rt, send, recv)  # warm-up: the first call's agreement
    rt.synchronize()
    with rt.capture(rt.stream) as g:
        tessera.ops.all_reduce(rt, send, recv)
    r[:] = SENTINEL
    rt.barrier()
    assert np.all(r == SENTINEL), "the captured call ran at capture"

    def rewrite(i):
        s[:] = block(rt.pe, i)
        r[:] = SENTINEL

    def check(i):
        np.testing.assert_array_equal(r, sum(block(p, i) for p in range(rt.n_pes)), err_msg=f"replay {i}")

    assert replay_checked(rt, g, rewrite, check) == REPLAYS


def test_all_reduce_of_numpy_send_reads_it_at_replay(rt, needs_mapped):
    send = np.zeros(COUNT, np.float32)  # ordinary memory: the graph holds its pointer too
    recv = rt.empty(COUNT, "float32")
    r = np.from_dlpack(recv)
    tessera.ops.all_reduce(rt, send, recv, op="max")
    rt.synchronize()
    with rt.capture() as g:
        tessera.ops.all_reduce(rt, send, recv, op="max")

    def rewrite(i):
        send[:] = block(rt.pe, i)
        r[:] = SENTINEL

    def check(i):
        np.testing.assert_array_equal(r, np.max([block(p, i) for p in range(rt.n_pes)], axis=0))

    assert replay_checked(rt, g, rewrite, check, replays=REPLAYS // 4) == REPLAYS // 4


def test_all_gather_replays(rt, needs_mapped):
    send, recv = rt.empty(COUNT, "float32"), rt.empty((rt.n_pes, COUNT), "float32")
    s, r = np.from_dlpack(send), np.from_dlpack(recv)
    tessera.ops.all_gather(rt, send, recv)
    rt.synchronize()
    with rt.capture() as g:
        tessera.ops.all_gather(rt, send, recv)

    def rewrite(i):
        s[:] = block(rt.pe, i)
        r[:] = SENTINEL

    def check(i):
        np.testing.assert_array_equal(r, np.stack([block(p, i) for p in range(rt.n_pes)]))

    assert replay_checked(rt, g, rewrite, check) == REPLAYS


def test_reduce_scatter_replays(rt, needs_mapped):
    p = rt.n_pes
    send, recv = rt.empty(p * COUNT, "float32"), rt.empty(COUNT, "float32")
    s, r = np.from_dlpack(send), np.from_dlpack(recv)
    tessera.ops.reduce_scatter(rt, send, recv)
    rt.synchronize()
    with rt.capture() as g:
        tessera.ops.reduce_scatter(rt, send, recv)

    def rewrite(i):
        s[:] = block(rt.pe, i, p * COUNT)
        r[:] = SENTINEL

    def check(i):
        mine = slice(rt.pe * COUNT, (rt.pe + 1) * COUNT)
        np.testing.assert_array_equal(r, sum(block(q, i, p * COUNT)[mine] for q in range(p)))

    assert replay_checked(rt, g, rewrite, check) == REPLAYS


def test_all_to_all_replays(rt, needs_mapped):
    p = rt.n_pes
    send, recv = rt.empty(p * COUNT, "int32"), rt.empty(p * COUNT, "int32")
    s, r = np.from_dlpack(send), np.from_dlpack(recv)
    tessera.ops.all_to_all(rt, send, recv)
    rt.synchronize()
    with rt.capture() as g:
        tessera.ops.all_to_all(rt, send, recv)

    def rewrite(i):
        s[:] = block(rt.pe, i, p * COUNT)
        r[:] = -1000

    def check(i):
        mine = slice(rt.pe * COUNT, (rt.pe + 1) * COUNT)
        np.testing.assert_array_equal(r, np.concatenate([block(q, i, p * COUNT)[mine] for q in range(p)]))

    assert replay_checked(rt, g, rewrite, check) == REPLAYS


def test_broadcast_replays_from_the_last_pe(rt, needs_mapped):
    root = rt.n_pes - 1
    send, recv = rt.empty(COUNT, "float32"), rt.empty(COUNT, "float32")
    s, r = np.from_dlpack(send), np.from_dlpack(recv)
    tessera.ops.broadcast(rt, send, recv, root=root)
    rt.synchronize()
    with rt.capture() as g:
        tessera.ops.broadcast(rt, send, recv, root=root)

    def rewrite(i):
        s[:] = block(rt.pe, i)
        r[:] = SENTINEL

    def check(i):
        np.testing.assert_array_equal(r, block(root, i))

    assert replay_checked(rt, g, rewrite, check) == REPLAYS


def rmsnorm_reference(xs, residual, weight, eps):
    v = sum(x.astype(np.float64) for x in xs) + residual
    return v / np.sqrt((v * v).mean(-1, keepdims=True) + eps) * weight


def test_all_reduce_rmsnorm_replays(rt, needs_mapped):
    rows, hidden, eps = 4, 32, 1e-6
    x, y = rt.empty((rows, hidden), "float32"), rt.empty((rows, hidden), "float32")
    xv, yv = np.from_dlpack(x), np.from_dlpack(y)
    residual = np.zeros((rows, hidden), np.float32)
    weight = np.linspace(0.5, 1.5, hidden).astype(np.float32)
    tessera.ops.all_reduce_rmsnorm(rt, x, residual, weight, y, eps=eps)
    rt.synchronize()
    with rt.capture() as g:
        tessera.ops.all_reduce_rmsnorm(rt, x, residual, weight, y, eps=eps)

    def rewrite(i):
        xv[:] = block(rt.pe, i, rows * hidden).reshape(rows, hidden)
        residual[:] = (i % 5) - 2
        yv[:] = SENTINEL

    def check(i):
        xs = [block(p, i, rows * hidden).reshape(rows, hidden) for p in range(rt.n_pes)]
        np.testing.assert_allclose(yv, rmsnorm_reference(xs, residual, weight, eps), rtol=1e-5, atol=1e-5)

    assert replay_checked(rt, g, rewrite, check, replays=REPLAYS // 4) == REPLAYS // 4


FUSED = {
    # name: (constructor arguments m, second, third; shapes of a, b, c; reference of every PE's a, b)
    "AgGemm": lambda p: ((8 * p, 8, 16), (8, 16), (16, 8), (8 * p, 8),
                         lambda a, b, pe: np.concatenate(a) @ b[pe]),
    "GemmRs": lambda p: ((8 * p, 8, 16), (8 * p, 16), (16, 8), (8, 8),
                         lambda a, b, pe: sum(a[q] @ b[q] for q in range(p))[8 * pe:8 * (pe + 1)]),
    "GemmAr": lambda p: ((8, 8, 16), (8, 16), (16, 8), (8, 8),
                         lambda a, b, pe: sum(a[q] @ b[q] for q in range(p))),
    "GemmAs": lambda p: ((8, 8, 16), (8, 16), (16, 8), (8, 8 * p),
                         lambda a, b, pe: np.concatenate([a[q] @ b[q] for q in range(p)], axis=1)),
}


@pytest.mark.parametrize("name", sorted(FUSED))
def test_fused_gemm_replays(rt, needs_mapped, name):
    args, a_shape, b_shape, c_shape, reference = FUSED[name](rt.n_pes)
    a = np.zeros(a_shape, np.float32)
    b = np.zeros(b_shape, np.float32)
    c = np.zeros(c_shape, np.float32)
    replays = REPLAYS // 10  # each replay is a GEMM on every PE's block threads

    def inputs(pe, i):
        return (block(pe, i, a.size).reshape(a_shape) / 4, block(pe + 7, i, b.size).reshape(b_shape) / 4)

    with getattr(tessera.ops, name)(rt, *args, "float32") as op:
        op.run(a, b, c)
        rt.synchronize()
        with rt.capture() as g:
            op.run(a, b, c)

        def rewrite(i):
            a[:], b[:] = inputs(rt.pe, i)
            c[:] = SENTINEL

        def check(i):
            every = [inputs(q, i) for q in range(rt.n_pes)]
            expected = reference([e[0] for e in every], [e[1] for e in every], rt.pe)
            np.testing.assert_allclose(c, expected, rtol=1e-5, atol=1e-5, err_msg=f"{op.pattern} replay {i}")

        assert replay_checked(rt, g, rewrite, check, replays=replays) == replays
        del g  # before free: the op's workspace is what the graph's work writes


def routing(pe, replay, tokens, experts):
    """Two distinct experts a token, and weights exact in float32, rewritten every replay."""
    t = np.arange(tokens)
    first = (t * 3 + replay + pe) % experts
    second = (first + 1 + (t + replay) % (experts - 1)) % experts
    idx = np.stack([first, second], axis=1).astype(np.int32)
    w = np.stack([((t + replay) % 4 + 1) / 8, np.full(tokens, 0.5)], axis=1).astype(np.float32)
    return idx, w


def test_moe_dispatch_and_combine_replay_as_two_graphs(rt, needs_mapped):
    p, tokens, hidden = rt.n_pes, 16, 8
    experts = 2 * p
    x = np.zeros((tokens, hidden), np.float32)
    idx = np.zeros((tokens, 2), np.int32)
    w = np.zeros((tokens, 2), np.float32)
    y = np.zeros((tokens, hidden), np.float32)
    replays = REPLAYS // 10
    with tessera.ops.MoeBuffer(rt, tokens, hidden, 2, experts, "float32") as moe:
        local = moe.local_experts
        # The expert (x2) runs on the host between the graphs: one fits every replay's rows.
        expert_out = np.zeros((moe.expert_capacity, hidden), np.float32)
        idx[:], w[:] = routing(rt.pe, 0, tokens, experts)
        h = moe.dispatch(x, idx, w)  # the calls made once outside a capture
        moe.combine(h, np.zeros((h.rows, hidden), np.float32), y)
        rt.synchronize()
        with rt.capture() as dispatch:
            h = moe.dispatch(x, idx, w)
            with pytest.raises(tessera.InvalidArgumentError, match="capturing"):
                h.rows  # the captured dispatch has not run: its row count is unknown
        with rt.capture() as combine:
            moe.combine(h, expert_out, y)
        with pytest.raises(tessera.InvalidArgumentError, match="expert_capacity"):
            with rt.capture():
                moe.combine(h, expert_out[:1], y)
        for i in range(1, replays + 1):
            x[:] = block(rt.pe, i, tokens * hidden).reshape(tokens, hidden)
            idx[:], w[:] = routing(rt.pe, i, tokens, experts)
            y[:] = SENTINEL
            dispatch.replay()
            rt.synchronize()
            counts = np.zeros(local, np.int64)
            for q in range(p):
                theirs, _ = routing(q, i, tokens, experts)
                for le in range(local):
                    counts[le] += np.count_nonzero(theirs == rt.pe * local + le)
            np.testing.assert_array_equal(np.from_dlpack(h.expert_counts), counts, err_msg=f"replay {i}")
            expert_out[:h.rows] = 2 * np.from_dlpack(h.expert_x)
            combine.replay()
            rt.synchronize()
            np.testing.assert_array_equal(y, 2 * x * w.sum(axis=1, keepdims=True), err_msg=f"replay {i}")
        del dispatch, combine  # before free: their work uses the buffer


def test_three_ops_in_one_graph_run_in_capture_order(rt, needs_mapped):
    p, root = rt.n_pes, 0
    send, summed = rt.empty(COUNT, "float32"), rt.empty(COUNT, "float32")
    gathered, spread = rt.empty((p, COUNT), "float32"), rt.empty((p, COUNT), "float32")
    s, ga, sp = np.from_dlpack(send), np.from_dlpack(gathered), np.from_dlpack(spread)
    sm = np.from_dlpack(summed)

    def calls():
        tessera.ops.all_reduce(rt, send, summed)  # summed = sum of send
        tessera.ops.all_gather(rt, summed, gathered)  # every row is that sum
        tessera.ops.broadcast(rt, gathered, spread, root=root)  # root's rows to everyone

    calls()
    rt.synchronize()
    with rt.capture() as g:
        calls()
    assert len(g) >= 3

    def rewrite(i):
        s[:] = block(rt.pe, i)
        for v in (sm, ga, sp):
            v[:] = SENTINEL

    def check(i):
        total = sum(block(q, i) for q in range(p))
        np.testing.assert_array_equal(sm, total)
        np.testing.assert_array_equal(ga, np.tile(total, (p, 1)))
        np.testing.assert_array_equal(sp, np.tile(total, (p, 1)))

    assert replay_checked(rt, g, rewrite, check, replays=REPLAYS // 2) == REPLAYS // 2


def test_replays_captured_into_another_graph_run_in_it(rt, needs_mapped):
    x = rt.empty(COUNT, "float32")
    v = np.from_dlpack(x)
    tessera.ops.all_reduce(rt, x, x)  # in place: each run multiplies the sum by n_pes
    rt.synchronize()
    with rt.capture() as inner:
        tessera.ops.all_reduce(rt, x, x)
    with rt.capture() as outer:
        inner.replay()
        inner.replay()
    assert len(outer) == 2 * len(inner) > 0

    def rewrite(i):
        v[:] = block(rt.pe, i)

    def check(i):
        np.testing.assert_array_equal(v, rt.n_pes * sum(block(q, i) for q in range(rt.n_pes)))

    assert replay_checked(rt, outer, rewrite, check, replays=REPLAYS // 4) == REPLAYS // 4


def test_graph_dropped_after_replay_still_completes(rt, needs_mapped):
    send, recv = rt.empty(COUNT, "float32"), rt.empty(COUNT, "float32")
    s, r = np.from_dlpack(send), np.from_dlpack(recv)
    tessera.ops.all_reduce(rt, send, recv)
    rt.synchronize()
    with rt.capture() as g:
        tessera.ops.all_reduce(rt, send, recv)
    s[:] = block(rt.pe, 5)
    r[:] = SENTINEL
    g.replay()
    del g  # the replay holds the graph (and its arrays) until synchronize
    rt.synchronize()
    np.testing.assert_array_equal(r, sum(block(q, 5) for q in range(rt.n_pes)))


def test_capture_inside_capture_raises_and_the_outer_capture_goes_on(rt, needs_mapped):
    send, recv = rt.empty(COUNT, "float32"), rt.empty(COUNT, "float32")
    s, r = np.from_dlpack(send), np.from_dlpack(recv)
    tessera.ops.all_reduce(rt, send, recv)
    rt.synchronize()
    with rt.capture() as outer:
        with pytest.raises(tessera.InvalidArgumentError, match="capturing already"):
            with rt.capture():
                pass
        assert rt.stream.capturing
        tessera.ops.all_reduce(rt, send, recv)
    with pytest.raises(tessera.InvalidArgumentError, match="entered once"):
        with outer:
            pass
    s[:] = block(rt.pe, 9)
    r[:] = SENTINEL
    outer.replay()
    rt.synchronize()
    np.testing.assert_array_equal(r, sum(block(q, 9) for q in range(rt.n_pes)))


def test_exception_in_the_block_ends_the_capture_and_discards_the_graph(rt, needs_mapped):
    send, recv = rt.empty(COUNT, "float32"), rt.empty(COUNT, "float32")
    s, r = np.from_dlpack(send), np.from_dlpack(recv)
    tessera.ops.all_reduce(rt, send, recv)
    rt.synchronize()
    with pytest.raises(ZeroDivisionError):
        with rt.capture() as g:
            tessera.ops.all_reduce(rt, send, recv)
            1 / 0
    assert not rt.stream.capturing and not g.captured and len(g) == 0
    with pytest.raises(tessera.InvalidArgumentError, match="discarded"):
        g.replay()
    # The stream runs calls again, and the discarded call never runs.
    s[:] = block(rt.pe, 3)
    r[:] = SENTINEL
    tessera.ops.all_reduce(rt, send, recv)
    rt.synchronize()
    np.testing.assert_array_equal(r, sum(block(q, 3) for q in range(rt.n_pes)))


def test_synchronize_inside_the_block_raises_and_the_graph_still_replays(rt, needs_mapped):
    send, recv = rt.empty(COUNT, "float32"), rt.empty(COUNT, "float32")
    s, r = np.from_dlpack(send), np.from_dlpack(recv)
    tessera.ops.all_reduce(rt, send, recv)
    rt.synchronize()
    with rt.capture() as g:
        tessera.ops.all_reduce(rt, send, recv)
        for wait in (rt.synchronize, rt.stream.synchronize, rt.device_barrier):
            with pytest.raises(tessera.InvalidArgumentError, match="the stream is capturing"):
                wait()
    assert len(g) >= 1
    s[:] = block(rt.pe, 11)
    r[:] = SENTINEL
    g.replay()
    rt.synchronize()
    np.testing.assert_array_equal(r, sum(block(q, 11) for q in range(rt.n_pes)))


def test_first_call_of_a_new_shape_refuses_capture(rt, needs_mapped):
    send, recv = rt.empty(COUNT + 5, "float32"), rt.empty(COUNT + 5, "float32")
    with pytest.raises(tessera.InvalidArgumentError, match="cannot be captured"):
        with rt.capture() as g:
            tessera.ops.all_reduce(rt, send, recv)
    assert not g.captured and not rt.stream.capturing
    tessera.ops.all_reduce(rt, send, recv)  # the call made outside a capture agrees, as usual
    rt.synchronize()


def test_replay_of_a_freed_array_raises(rt, needs_mapped):
    send, recv = rt.empty(COUNT, "float32"), rt.empty(COUNT, "float32")
    tessera.ops.all_reduce(rt, send, recv)
    rt.synchronize()
    with rt.capture() as g:
        tessera.ops.all_reduce(rt, send, recv)
    recv.free()
    with pytest.raises(tessera.InvalidArgumentError, match="freed"):
        g.replay()


def test_torch_ops_refuse_capture_they_synchronize(rt, needs_mapped):
    torch = pytest.importorskip("torch")
    import tessera.torch as tt

    send, recv = tt.empty(rt, COUNT, torch.float32), tt.empty(rt, COUNT, torch.float32)
    send.fill_(1)
    tt.all_reduce(rt, send, recv)  # outside a capture both work (and agree on their shapes)
    tt.all_reduce_sum(rt, send)
    with pytest.raises(tessera.InvalidArgumentError, match="the stream is capturing"):
        with rt.capture():
            tt.all_reduce(rt, send, recv)
    with pytest.raises(tessera.InvalidArgumentError, match="the stream is capturing"):
        with rt.capture():
            tt.all_reduce_sum(rt, send)
    assert not rt.stream.capturing
    tt.release(rt)


def test_replay_and_capture_after_finalize_raise(rt):
    # Last in the module: it finalizes the module's runtime (the fixture's finalize is then a no-op).
    with rt.capture() as g:
        pass
    stream = rt.stream
    rt.finalize()
    with pytest.raises(tessera.InvalidArgumentError, match="finalized"):
        g.replay()
    with pytest.raises(tessera.InvalidArgumentError, match="finalized"):
        rt.capture(stream)
    assert not stream.capturing and len(g) == 0
