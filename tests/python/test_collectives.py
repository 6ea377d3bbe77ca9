"""tessera.ops collectives on teams, as real processes: every PE of the job runs this same pytest
session (one PE, tessera-run -np 2, 3, 4, 5, two pretend nodes, mpirun -np 2), so the tests run in
the same order everywhere. Results are checked against a float64 NumPy reduction of every PE's
data, which each PE rebuilds from the PEs' seeds."""

import numpy as np
import pytest

import tessera

FLOATS = ("float32", "float16")  # bfloat16 needs torch: test_collectives_torch.py
INTS = ("int32", "int64")
COUNTS = (1, 7, 4093)


@pytest.fixture(scope="module")
def rt():
    runtime = tessera.init(heap_size="64M")
    yield runtime
    runtime.finalize()


def data_of(pe, count, dtype, op, salt=0):
    """PE `pe`'s send data: small integers, so every dtype holds every partial result exactly."""
    gen = np.random.default_rng([pe, count, salt])
    if op == "prod":
        return gen.choice(np.array([-2, -1, 1, 2, 3]), count).astype(dtype)
    return gen.integers(-8, 9, count).astype(dtype)


def reference(members, count, dtype, op, salt=0):
    stack = np.stack([data_of(p, count, dtype, op, salt).astype(np.float64) for p in members])
    return {"sum": stack.sum, "max": stack.max, "min": stack.min, "prod": stack.prod}[op](axis=0).astype(dtype)


def all_mapped(rt, team):
    """Collective: True on every PE when each member of `team` reaches every member's heap by
    load/store, so that every PE takes the same skip decision."""
    mine = not team.is_member or all(rt.transport(team.pe(i)) in ("self", "mapped") for i in range(team.size))
    with rt.zeros(rt.n_pes, "int32") as flags:
        tessera.ops.all_gather(rt, np.array([int(mine)], np.int32), flags)
        rt.synchronize()
        everywhere = bool(np.from_dlpack(flags).all())
        rt.barrier()  # nobody frees (and reuses) the flags while a peer still reads them
    return everywhere


def make_team(rt, kind):
    if kind == "world":
        return rt.team_world()
    if kind == "node":
        return rt.team_node()
    return rt.team_split_strided(rt.team_world(), 0, 2, (rt.n_pes + 1) // 2)


def heap_view(block, dtype, count):
    """A NumPy view of the first `count` elements of a uint8 heap block, as `dtype`."""
    return np.from_dlpack(block).view(dtype)[:count]


def test_team_of_a_finalized_runtime_refuses_use():
    # Runs first (the module's runtime is made by the first test that asks for it): runtimes
    # follow one another in a process, they do not overlap.
    other = tessera.init(heap_size="8M")
    team = other.team_world()
    other.finalize()
    assert repr(team) == "tessera.Team(finalized)"
    with pytest.raises(tessera.InvalidArgumentError, match="the Runtime was finalized"):
        team.size


def test_world_team_ranks_every_pe(rt):
    world = rt.team_world()
    assert (world.start, world.stride, world.size, world.n_pes) == (0, 1, rt.n_pes, rt.n_pes)
    assert world.my_rank == rt.pe and world.is_member and len(world) == rt.n_pes
    assert [world.pe(i) for i in range(rt.n_pes)] == list(range(rt.n_pes))
    assert world.rank_of(rt.n_pes) == -1 and world.rank_of(-1) == -1
    assert rt.team_world() == world  # made once: the second call is not collective
    assert "size=%d" % rt.n_pes in repr(world)
    with pytest.raises(tessera.InvalidArgumentError, match=r"Team.pe: rank -1 is outside the team"):
        world.pe(-1)
    with pytest.raises(tessera.InvalidArgumentError, match=r"is outside the team \(0\.\.%d\)" % (rt.n_pes - 1)):
        world.pe(rt.n_pes)


def test_node_team_holds_the_pes_of_this_node(rt):
    node = rt.team_node()
    assert node.size == rt.node_size and node.my_rank == rt.node_pe
    assert node.pe(node.my_rank) == rt.pe
    assert all_mapped(rt, node)
    assert rt.team_node() == node


def test_split_strided_team_of_even_pes(rt):
    world = rt.team_world()
    size = (rt.n_pes + 1) // 2
    even = rt.team_split_strided(world, 0, 2, size)
    assert (even.start, even.stride, even.size) == (0, 2, size)
    assert even.my_rank == (rt.pe // 2 if rt.pe % 2 == 0 else -1)
    assert even.is_member == (rt.pe % 2 == 0)
    assert [even.pe(i) for i in range(size)] == list(range(0, rt.n_pes, 2))
    assert even.rank_of(2) == (1 if rt.n_pes > 2 else -1) and even.rank_of(1) == -1
    assert rt.team_split_strided(world, 0, 2, size) == even
    # A split of a split: rank r of `even` is world PE 2r.
    if size >= 2:
        second = rt.team_split_strided(even, 1, 1, 1)
        assert (second.start, second.size) == (2, 1)
        assert second.my_rank == (0 if rt.pe == 2 else -1)


def test_split_strided_rejects_ranks_outside_the_parent(rt):
    world = rt.team_world()
    for start, stride, size in ((1, 1, rt.n_pes), (0, 1, 0), (-1, 1, 1), (0, 0, 1)):
        with pytest.raises(tessera.InvalidArgumentError,
                           match="must be >= 0, >= 1, >= 1 and lie inside the parent team"):
            rt.team_split_strided(world, start, stride, size)
    with pytest.raises(TypeError):
        rt.team_split_strided("world", 0, 1, 1)


def test_team_over_block_is_made_by_its_members_only(rt):
    """The odd PEs make a team over a block reserved collectively before, without the even PEs
    taking part; after a barrier it runs collectives. Then the refusals."""
    size = rt.team_workspace_size
    assert size > 0
    block = rt.zeros(size, "uint8")  # collective: the same offset on every PE
    recv = rt.zeros(4, "int64")
    odd = list(range(1, rt.n_pes, 2))
    team = None
    if rt.pe in odd:
        team = rt.team_over_block(1, 2, len(odd), block)
        assert (team.start, team.stride, team.size, team.my_rank) == (1, 2, len(odd), odd.index(rt.pe))
    rt.barrier()  # every member zeroed its workspace before any member signals into it
    if team is not None and all_mapped_here(rt, odd):
        for i in range(3):
            tessera.ops.all_reduce(rt, np.full(4, rt.pe + i, np.int64), recv, team=team)
            rt.synchronize()
            assert (np.from_dlpack(recv) == sum(p + i for p in odd)).all()
    rt.barrier()
    with pytest.raises(tessera.InvalidArgumentError, match="lie inside the job"):
        rt.team_over_block(0, 1, rt.n_pes + 1, block)
    if rt.n_pes > 1:
        outsider = 0 if rt.pe != 0 else 1
        with pytest.raises(tessera.InvalidArgumentError, match="this PE is not one of the members"):
            rt.team_over_block(outsider, rt.n_pes, 1, block)
    with pytest.raises(tessera.InvalidArgumentError, match="bytes of the symmetric heap"):
        rt.team_over_block(rt.pe, 1, 1, np.from_dlpack(block)[: size // 2])
    with pytest.raises(tessera.InvalidArgumentError, match="point into the symmetric heap|not in the heap"):
        rt.team_over_block(rt.pe, 1, 1, np.zeros(size, np.uint8))
    rt.barrier()
    recv.free()
    block.free()


def all_mapped_here(rt, pes):
    return all(rt.transport(p) in ("self", "mapped") for p in pes)


@pytest.mark.parametrize("kind", ["world", "node", "stride2"])
@pytest.mark.parametrize("algo", ["auto", "one_shot", "two_shot", "ring"])
def test_all_reduce_matches_numpy(rt, kind, algo):
    team = make_team(rt, kind)
    if not all_mapped(rt, team):
        pytest.skip("a member's heap is not mapped here (another node): see test_all_reduce_needs_mapped_members")
    members = [team.pe(i) for i in range(team.size)]
    with rt.zeros(max(COUNTS) * 8, "uint8") as block:
        if team.is_member:
            for dtype in FLOATS + INTS:
                for op in ("sum", "max", "min") + (("prod",) if dtype in INTS else ()):
                    for count in COUNTS:
                        recv = heap_view(block, dtype, count)
                        tessera.ops.all_reduce(rt, data_of(rt.pe, count, dtype, op), recv, op=op, algo=algo,
                                               team=team)
                        rt.synchronize()
                        np.testing.assert_array_equal(recv, reference(members, count, dtype, op),
                                                      err_msg=f"{dtype} {op} count {count} on {team}")
        rt.barrier()


@pytest.mark.parametrize("dtype", INTS)
def test_all_reduce_atomic_sums_integers(rt, dtype):
    world = rt.team_world()
    if not all_mapped(rt, world):
        pytest.skip("a peer's heap is not mapped here (another node)")
    members = list(range(rt.n_pes))
    with rt.zeros(4093, dtype) as recv:
        for count in COUNTS:
            out = np.from_dlpack(recv)[:count]
            tessera.ops.all_reduce(rt, data_of(rt.pe, count, dtype, "sum"), out, algo="atomic")
            rt.synchronize()
            np.testing.assert_array_equal(out, reference(members, count, dtype, "sum"))
        rt.barrier()


def test_all_reduce_in_place_twenty_calls_without_reset(rt):
    """send is recv; each call brings fresh data and nothing is reset between calls."""
    world = rt.team_world()
    if not all_mapped(rt, world):
        pytest.skip("a peer's heap is not mapped here (another node)")
    members = list(range(rt.n_pes))
    with rt.empty(4093, "float32") as buf:
        x = np.from_dlpack(buf)
        for i in range(20):
            x[:] = data_of(rt.pe, 4093, "float32", "sum", salt=i)
            rt.barrier()  # no peer reads this PE's buffer as its send before it is filled
            tessera.ops.all_reduce(rt, buf, buf)
            rt.synchronize()
            np.testing.assert_array_equal(x, reference(members, 4093, "float32", "sum", salt=i))
            rt.barrier()  # nor overwrites it before this PE compared


def test_all_reduce_of_a_mebi_element_float_array(rt):
    world = rt.team_world()
    if not all_mapped(rt, world):
        pytest.skip("a peer's heap is not mapped here (another node)")
    count = 1 << 20
    gen = [np.random.default_rng(pe + 77) for pe in range(rt.n_pes)]
    data = [g.standard_normal(count).astype(np.float32) for g in gen]
    with rt.zeros(count, "float32") as recv:
        tessera.ops.all_reduce(rt, data[rt.pe], recv)
        rt.synchronize()
        expected = np.sum(np.stack(data).astype(np.float64), axis=0)
        np.testing.assert_allclose(np.from_dlpack(recv), expected, rtol=1e-5, atol=1e-5)
        rt.barrier()


def test_all_reduce_bad_arguments_raise_before_anything_runs(rt):
    world = rt.team_world()
    node = rt.team_node()  # its members are mapped, so only the checks under test can fail
    with rt.zeros(16, "float32") as recv:
        send = np.ones(16, np.float32)
        bad = [
            (dict(send=np.ones(16, np.int32)), "dtypes differ"),
            (dict(send=np.ones(17, np.float32)), r"recv is \(16,\) float32 \(64 bytes\), needs send's size = 68"),
            (dict(send=np.ones(8, np.float64), recv=np.from_dlpack(recv).view(np.float64)),
             "dtype float64 is not supported; use float32, bfloat16, float16, int32 or int64"),
            (dict(op="avg"), "op must be 'sum', 'max', 'min' or 'prod', not 'avg'"),
            (dict(algo="tree"), "algo must be 'auto', 'one_shot', 'two_shot', 'ring' or 'atomic', not 'tree'"),
            (dict(op="prod"), r"op prod is for integer dtypes \(i32, i64\), got f32"),
            (dict(op="max", algo="atomic"), "the atomic algorithm only sums, got op max"),
            (dict(send=np.ones(16, np.float16), recv=np.from_dlpack(recv).view(np.float16), algo="atomic"),
             "the atomic algorithm adds i32, i64"),
            (dict(recv=np.zeros(16, np.float32)), "recv must point into the symmetric heap"),
            (dict(send=np.zeros((16, 2), np.float32)[:, 0]), "contiguous"),
            (dict(send=np.ones(0, np.float32)), "count must be at least 1, got 0"),
        ]
        for change, message in bad:
            args = dict(send=send, recv=recv, op="sum", algo="auto", team=node) | change
            with pytest.raises(tessera.InvalidArgumentError, match=message):
                tessera.ops.all_reduce(rt, args.pop("send"), args.pop("recv"), **args)
        with pytest.raises(TypeError, match="team"):
            tessera.ops.all_reduce(rt, send, recv, team="world")
        if rt.pe % 2 == 1:
            even = rt.team_split_strided(world, 0, 2, (rt.n_pes + 1) // 2)
            with pytest.raises(tessera.InvalidArgumentError,
                               match=r"this PE is not a member of team \(start 0, stride 2, size"):
                tessera.ops.all_reduce(rt, send, recv, team=even)
        else:
            rt.team_split_strided(world, 0, 2, (rt.n_pes + 1) // 2)  # collective: every PE makes it
        rt.barrier()


def test_all_reduce_count_mismatch_between_pes_names_both_calls(rt):
    world = rt.team_world()
    if rt.n_pes < 2 or not all_mapped(rt, world):
        pytest.skip("needs two PEs whose heaps are mapped")
    # Counts no other test uses: the check runs on a combination's first call only.
    count = 5 if rt.pe == 0 else 6
    with rt.zeros(11, "float32") as recv:
        with pytest.raises(tessera.InvalidArgumentError, match="PEs made different collective calls") as e:
            tessera.ops.all_reduce(rt, np.ones(count, np.float32), recv)
        assert "ops::all_reduce(5 x f32, sum" in e.value.message
        assert "ops::all_reduce(6 x f32, sum" in e.value.message
        # The buffer still reduces, with a combination no PE made before (each PE records its own
        # combination as checked even when the check fails).
        tessera.ops.all_reduce(rt, np.ones(11, np.float32), recv)
        rt.synchronize()
        assert (np.from_dlpack(recv) == rt.n_pes).all()
        rt.barrier()


def test_all_reduce_count_mismatch_on_a_subteam_fails_at_synchronize(rt):
    """On a team smaller than the job the agreement check runs on the stream: the call returns and
    rt.synchronize() raises on every member, naming both calls."""
    if rt.n_pes < 3:
        pytest.skip("needs a team of two PEs smaller than the job")
    # A team no other test uses: after a mismatch its members' epochs may differ.
    team = rt.team_split_strided(rt.team_world(), 1, 1, rt.n_pes - 1)
    if not all_mapped(rt, team):
        pytest.skip("a member's heap is not mapped here (another node)")
    with rt.zeros(16, "float32") as recv:
        if team.is_member:
            count = 5 if team.my_rank == 0 else 6
            tessera.ops.all_reduce(rt, np.ones(count, np.float32), recv, team=team)
            with pytest.raises(tessera.InvalidArgumentError,
                               match=r"PEs made different collective calls on team \(start 1, stride 1, size %d\)"
                               % team.size) as e:
                rt.synchronize()
            assert "PE 1 called ops::all_reduce(5 x f32, sum" in e.value.message
            assert "PE 2 called ops::all_reduce(6 x f32, sum" in e.value.message
        rt.barrier()


def test_all_reduce_needs_mapped_members(rt):
    world = rt.team_world()
    unmapped = [p for p in range(rt.n_pes) if rt.transport(p) not in ("self", "mapped")]
    if not unmapped:
        pytest.skip("every PE's heap is mapped here (one node)")
    with rt.zeros(4, "float32") as recv:
        with pytest.raises(tessera.InvalidArgumentError,
                           match=r"member PE %d is reached through proxy" % unmapped[0]):
            tessera.ops.all_reduce(rt, np.ones(4, np.float32), recv, team=world)
        rt.barrier()


def block_data(pe, blocks, count, dtype, op="sum", salt=0):
    return data_of(pe, blocks * count, dtype, op, salt=salt + 1000)


@pytest.mark.parametrize("kind", ["world", "node", "stride2"])
@pytest.mark.parametrize("algo", ["auto", "one_shot", "ring"])
def test_reduce_scatter_matches_numpy(rt, kind, algo):
    team = make_team(rt, kind)
    if not all_mapped(rt, team):
        pytest.skip("a member's heap is not mapped here (another node)")
    members = [team.pe(i) for i in range(team.size)]
    with rt.zeros(max(COUNTS) * 8, "uint8") as block:
        if team.is_member:
            me = team.my_rank
            for dtype in FLOATS + INTS:
                for op in ("sum", "max", "min") + (("prod",) if dtype in INTS else ()):
                    for count in COUNTS:
                        recv = heap_view(block, dtype, count)
                        tessera.ops.reduce_scatter(rt, block_data(rt.pe, team.size, count, dtype, op), recv, op=op,
                                                   algo=algo, team=team)
                        rt.synchronize()
                        stack = np.stack([block_data(p, team.size, count, dtype, op).astype(np.float64)
                                          for p in members])
                        full = {"sum": stack.sum, "max": stack.max, "min": stack.min,
                                "prod": stack.prod}[op](axis=0).astype(dtype)
                        np.testing.assert_array_equal(recv, full[me * count:(me + 1) * count],
                                                      err_msg=f"{dtype} {op} count {count} on {team}")
        rt.barrier()


def test_reduce_scatter_in_place_repeated(rt):
    world = rt.team_world()
    if not all_mapped(rt, world):
        pytest.skip("a peer's heap is not mapped here (another node)")
    p, count = rt.n_pes, 1000
    with rt.empty(p * count, "int64") as buf:
        x = np.from_dlpack(buf)
        mine = x[rt.pe * count:(rt.pe + 1) * count]
        for i in range(20):
            x[:] = block_data(rt.pe, p, count, "int64", salt=i)
            rt.barrier()  # every PE's send is filled before any PE reads it
            tessera.ops.reduce_scatter(rt, buf, mine)
            rt.synchronize()
            total = sum(block_data(q, p, count, "int64", salt=i) for q in range(p))
            np.testing.assert_array_equal(mine, total[rt.pe * count:(rt.pe + 1) * count])
            rt.barrier()


@pytest.mark.parametrize("kind", ["world", "node", "stride2"])
def test_all_to_all_delivers_block_r_from_rank_r(rt, kind):
    team = make_team(rt, kind)
    if not all_mapped(rt, team):
        pytest.skip("a member's heap is not mapped here (another node)")
    with rt.zeros(team.size * max(COUNTS) * 8, "uint8") as block:
        if team.is_member:
            me = team.my_rank
            for dtype in FLOATS + INTS:
                for count in COUNTS:
                    recv = heap_view(block, dtype, team.size * count)
                    tessera.ops.all_to_all(rt, block_data(rt.pe, team.size, count, dtype), recv, team=team)
                    rt.synchronize()
                    expected = np.concatenate([block_data(team.pe(r), team.size, count, dtype)[me * count:(me + 1) * count]
                                               for r in range(team.size)])
                    np.testing.assert_array_equal(recv, expected, err_msg=f"{dtype} count {count} on {team}")
        rt.barrier()


def test_all_to_all_in_place(rt):
    world = rt.team_world()
    if not all_mapped(rt, world):
        pytest.skip("a peer's heap is not mapped here (another node)")
    p, count = rt.n_pes, 7
    with rt.empty(p * count, "float32") as buf:
        x = np.from_dlpack(buf)
        for i in range(3):
            x[:] = block_data(rt.pe, p, count, "float32", salt=i)
            rt.barrier()
            tessera.ops.all_to_all(rt, buf, buf)
            rt.synchronize()
            expected = np.concatenate([block_data(r, p, count, "float32", salt=i)[rt.pe * count:(rt.pe + 1) * count]
                                       for r in range(p)])
            np.testing.assert_array_equal(x, expected)
            rt.barrier()


def v_count(src, dst, salt):
    """Elements rank src sends rank dst in all_to_all_v tests (0 included)."""
    return (3 * src + 5 * dst + salt) % 7


def test_all_to_all_v_packs_blocks_by_source_rank(rt):
    world = rt.team_world()
    if not all_mapped(rt, world):
        pytest.skip("a peer's heap is not mapped here (another node)")
    p = rt.n_pes
    with rt.zeros(7 * p, "int64") as recv:
        for salt in range(3):
            counts = np.array([v_count(rt.pe, r, salt) for r in range(p)], np.uint64)
            send = np.concatenate([np.full(int(counts[r]), 100 * rt.pe + r, np.int64) for r in range(p)])
            recv_counts = np.zeros(p, np.uint64)
            recv_offsets = np.zeros(p, np.int64)
            tessera.ops.all_to_all_v(rt, send, counts, recv, recv_counts, recv_offsets)
            rt.synchronize()
            incoming = [v_count(s, rt.pe, salt) for s in range(p)]
            assert recv_counts.tolist() == incoming
            assert recv_offsets.tolist() == np.concatenate([[0], np.cumsum(incoming)[:-1]]).tolist()
            expected = np.concatenate([np.full(c, 100 * s + rt.pe, np.int64) for s, c in enumerate(incoming)])
            np.testing.assert_array_equal(np.from_dlpack(recv)[:sum(incoming)], expected)
            rt.barrier()


def test_all_to_all_v_overflow_is_an_error_on_every_member(rt):
    world = rt.team_world()
    if rt.n_pes < 2 or not all_mapped(rt, world):
        pytest.skip("needs two PEs whose heaps are mapped")
    p = rt.n_pes
    # Every PE sends 4 elements to every PE: PE 0's recv holds 4 * p - 1 (the block is symmetric,
    # so the capacity is what a view makes of it).
    with rt.zeros(4 * p, "float32") as recv:
        capacity = 4 * p - 1 if rt.pe == 0 else 4 * p
        counts = np.full(p, 4, np.uint64)
        expected = r"all_to_all_v: PE 0 would receive {} elements, more than its recv_capacity of {} \(from PE 0: 4".format(
            4 * p, 4 * p - 1)
        with pytest.raises(tessera.InvalidArgumentError, match=expected):
            tessera.ops.all_to_all_v(rt, np.ones(4 * p, np.float32), counts, np.from_dlpack(recv)[:capacity],
                                     np.zeros(p, np.uint64), np.zeros(p, np.uint64))
            rt.synchronize()
        rt.barrier()
        # The team is still usable.
        got = np.zeros(p, np.uint64)
        tessera.ops.all_to_all_v(rt, np.ones(4 * p, np.float32), counts, recv, got, np.zeros(p, np.uint64))
        rt.synchronize()
        assert got.tolist() == [4] * p
        rt.barrier()


@pytest.mark.parametrize("kind", ["world", "node", "stride2"])
def test_broadcast_from_every_root(rt, kind):
    team = make_team(rt, kind)
    if not all_mapped(rt, team):
        pytest.skip("a member's heap is not mapped here (another node)")
    with rt.zeros(max(COUNTS) * 8, "uint8") as block:
        if team.is_member:
            for dtype in FLOATS + INTS:
                for count in COUNTS:
                    for root in range(team.size):
                        recv = heap_view(block, dtype, count)
                        send = data_of(rt.pe, count, dtype, "sum", salt=root) if team.my_rank == root else None
                        tessera.ops.broadcast(rt, send, recv, root=root, team=team)
                        rt.synchronize()
                        np.testing.assert_array_equal(recv, data_of(team.pe(root), count, dtype, "sum", salt=root),
                                                      err_msg=f"{dtype} count {count} root {root} on {team}")
        rt.barrier()


def test_broadcast_in_place_on_the_root(rt):
    world = rt.team_world()
    if not all_mapped(rt, world):
        pytest.skip("a peer's heap is not mapped here (another node)")
    root = rt.n_pes - 1
    with rt.zeros(4093, "int32") as buf:
        x = np.from_dlpack(buf)
        for i in range(5):
            if rt.pe == root:
                x[:] = data_of(root, 4093, "int32", "sum", salt=i)
            tessera.ops.broadcast(rt, buf if rt.pe == root else None, buf, root=root)
            rt.synchronize()
            np.testing.assert_array_equal(x, data_of(root, 4093, "int32", "sum", salt=i))
            rt.barrier()


def test_data_collectives_bad_arguments(rt):
    # The node's team: its members are mapped, so only the checks under test can fail.
    team = rt.team_node()
    p = team.size
    with rt.zeros(16 * p, "float32") as recv:
        if p > 1:
            with pytest.raises(tessera.InvalidArgumentError, match=r"not team.size \(%d\) blocks of equal count" % p):
                tessera.ops.reduce_scatter(rt, np.ones(16 * p + 1, np.float32), recv, team=team)
            with pytest.raises(tessera.InvalidArgumentError, match="blocks of equal count"):
                tessera.ops.all_to_all(rt, np.ones(16 * p + 1, np.float32), recv, team=team)
        with pytest.raises(tessera.InvalidArgumentError, match="algo must be 'auto', 'one_shot' or 'ring', not 'two_shot'"):
            tessera.ops.reduce_scatter(rt, np.ones(16 * p, np.float32), recv, algo="two_shot", team=team)
        with pytest.raises(tessera.InvalidArgumentError, match="op must be"):
            tessera.ops.reduce_scatter(rt, np.ones(16 * p, np.float32), recv, op="avg", team=team)
        with pytest.raises(tessera.InvalidArgumentError, match="dtypes differ"):
            tessera.ops.all_to_all(rt, np.ones(16 * p, np.int32), recv, team=team)
        with pytest.raises(tessera.InvalidArgumentError, match="recv must point into the symmetric heap"):
            tessera.ops.all_to_all(rt, np.ones(16 * p, np.float32), np.zeros(16 * p, np.float32), team=team)
        with pytest.raises(tessera.InvalidArgumentError, match=r"send_counts must hold team.size \(%d\) uint64 or int64" % p):
            tessera.ops.all_to_all_v(rt, np.ones(4, np.float32), np.ones(p, np.int32), recv,
                                     np.zeros(p, np.uint64), np.zeros(p, np.uint64), team=team)
        with pytest.raises(tessera.InvalidArgumentError, match="recv_offsets must hold"):
            tessera.ops.all_to_all_v(rt, np.ones(4, np.float32), np.ones(p, np.uint64), recv,
                                     np.zeros(p, np.uint64), np.zeros(max(p - 1, 0), np.uint64), team=team)
        with pytest.raises(tessera.InvalidArgumentError,
                           match=r"broadcast: root %d is not a rank of team \(start %d, stride %d, size %d\)"
                           % (p, team.start, team.stride, p)):
            tessera.ops.broadcast(rt, np.ones(16 * p, np.float32), recv, root=p, team=team)
        with pytest.raises(tessera.InvalidArgumentError, match=r"send is \(3,\) float32 .* needs recv's size"):
            tessera.ops.broadcast(rt, np.ones(3, np.float32), recv, root=team.my_rank, team=team)
        with pytest.raises(tessera.InvalidArgumentError, match="dtype float64 is not supported"):
            tessera.ops.broadcast(rt, None, np.from_dlpack(recv).view(np.float64), team=team)
        rt.barrier()
