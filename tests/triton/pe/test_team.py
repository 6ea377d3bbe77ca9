"""tx.barrier(ctx, team) over tessera.Teams: the world team, the node team and strided splits
(even and odd PEs), repeated so every round is ordered, interleaved with the whole-job barrier
(separate counters: neither ends early), and called by a PE outside the team (recorded as the
C++ team barrier reports it). The words and algorithm are the C++ device team barrier's."""

import numpy as np
import pytest
import torch

import tessera
import tessera.triton as tx
from conftest import sym
from tx_kernels import barrier_once, team_barrier_once, team_barrier_rounds


def split_teams(rt):
    """(even PEs, odd PEs) of the world team (the odd team is None on one PE)."""
    world = rt.team_world()
    evens = rt.team_split_strided(world, 0, 2, (rt.n_pes + 1) // 2)
    odds = rt.team_split_strided(world, 1, 2, rt.n_pes // 2) if rt.n_pes > 1 else None
    return evens, odds


def rounds_over(rt, ctx, t, rounds=30):
    slots, slots_t = sym(rt, 2 * t.size, "uint64")
    bad = torch.full((1, ), -1, dtype=torch.int64)
    rt.barrier()
    team_barrier_rounds[(1, )](slots_t, bad, rounds, ctx, tx.team(rt, t))
    assert bad.item() == 0
    # The last two rounds: rounds - 2 and rounds - 1 wrote rounds - 1 and rounds.
    last = slots_t.numpy()
    parity = (rounds - 1) % 2
    assert (last[parity * t.size:(parity + 1) * t.size] == rounds).all(), last


def test_team_barrier_over_the_world_team_orders_every_round(rt, ctx):
    rounds_over(rt, ctx, rt.team_world())
    rt.barrier()


def test_team_barrier_over_the_node_team_orders_every_round(rt, ctx):
    rounds_over(rt, ctx, rt.team_node())
    rt.barrier()


def test_team_barriers_of_disjoint_strided_teams_run_side_by_side(rt, ctx):
    """Even and odd PEs each run 30 rounds over their own team at the same time."""
    evens, odds = split_teams(rt)
    for t in (evens, odds):
        if t is not None and t.is_member:
            rounds_over(rt, ctx, t)
    rt.barrier()


def test_team_and_whole_job_barriers_interleave(rt, ctx):
    """The team barrier counts on the team's words, the whole-job one on the control page: a
    round ordered by either sees every member's write, and neither waits for the other's
    count."""
    world = rt.team_world()
    tm = tx.team(rt, world)
    slots, slots_t = sym(rt, 2 * rt.n_pes, "int64")
    for i in range(9):
        half = (i % 2) * rt.n_pes
        for pe in range(rt.n_pes):
            rt.put(torch.from_dlpack(slots)[half + rt.pe:half + rt.pe + 1],
                   np.array([i + 1], np.int64), pe)
        if i % 3 == 1:
            barrier_once[(1, )](ctx)
        else:
            team_barrier_once[(1, )](ctx, tm)
        assert np.array_equal(slots_t.numpy()[half:half + rt.n_pes], np.full(rt.n_pes, i + 1)), i
    rt.barrier()


def test_team_barrier_called_by_a_non_member_is_refused(rt, ctx):
    evens, odds = split_teams(rt)
    if evens.is_member:
        other = odds
    else:
        other = evens
    if other is None:
        pytest.skip("one PE: every team holds it")
    team_barrier_once[(1, )](ctx, tx.team(rt, other))
    with pytest.raises(tessera.InvalidArgumentError) as info:
        tx.check(rt)
    assert info.value.message == (
        f"barrier on team (start {other.start}, stride 2, size {other.size}) on PE {rt.pe}: "
        "this PE is not a member of the team (my_rank -1); only members call it")
    rt.barrier()


def test_team_tensor_holds_the_team_and_its_barrier_words(rt, ctx):
    evens, odds = split_teams(rt)
    w = tessera.TRITON_CONTEXT_WORDS["team_words"]
    tm = tx.team(rt, evens).tolist()
    assert len(tm) == w["words"]
    assert [tm[w[k]] for k in ("start", "stride", "size", "my_rank")] == [
        0, 2, evens.size, evens.my_rank]
    # The barrier words are the last bytes of the workspace, as C++ TeamBarrierWords places them.
    need = ((16 + evens.size) * 8 + 63) // 64 * 64
    assert tm[w["barrier_words"]] == tm[w["workspace"]] + tm[w["workspace_bytes"]] - need
    rt.barrier()
