"""One rank of a torch.distributed job on the "tessera" backend, for tests/python/test_distributed.py
(which starts the ranks itself with RANK/WORLD_SIZE/MASTER_ADDR/MASTER_PORT, as torchrun does) and
for a ctest entry under torchrun. Usage: dist_job.py <scenario>

    collectives   every supported c10d call against a reference computed here, async Work, groups
    bad-input     unsupported dtype / op / device, non-contiguous tensors, sizes that differ across
                  ranks: each raises on every rank, and the group still works afterwards
    ddp           a small MLP trained 20 steps under DDP on "tessera" and, beside it, on a gloo
                  group: the parameters agree (bit for bit at 2 ranks)
    fsdp          the same MLP under FSDP2 (fully_shard) for 5 steps against one process
    rank-dies     rank 1 exits in the middle of a step; the others' next call raises
    shared-runtime  a runtime of the program's own (set_runtime) serves the group and tessera.torch
    subgroups     new_group of evenly spaced ranks (overlapping groups, P = 4 and 5): every call
                  against a reference, larger than the staging (moved in pieces), DDP on a
                  sub-group against gloo on the same ranks, send/recv on a sub-group; refused:
                  uneven ranks, more sub-groups than reserved

Prints "rank r: ok <scenario>" at the end (rank-dies: "rank r: saw <Error>"); any failure is an
exception (exit 1)."""

import os
import sys

import torch
import torch.distributed as dist

import tessera
import tessera.distributed as td


def say(line):
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def data(rank, n, dtype, salt=0):
    """Rank `rank`'s deterministic input: small integers, exact in every dtype and in any sum."""
    g = torch.Generator().manual_seed(1000 * rank + salt)
    return torch.randint(-8, 9, (n,), generator=g).to(dtype)


def expect_raises(what, fn, *fragments, kinds=(ValueError, tessera.Error)):
    try:
        fn()
    except kinds as e:
        text = str(e)
        for f in fragments:
            assert f in text, f"{what}: {f!r} not in {text!r}"
        return
    raise AssertionError(f"{what}: nothing raised")


def collectives(rank, world):
    ref = lambda n, dtype, salt=0: [data(r, n, dtype, salt) for r in range(world)]  # noqa: E731
    for dtype in (torch.float32, torch.bfloat16, torch.float16, torch.int32, torch.int64):
        for n in (1, 7, 1000):
            everyone = ref(n, dtype)
            stacked = torch.stack(everyone).to(torch.float64)
            for op, want in ((dist.ReduceOp.SUM, stacked.sum(0)), (dist.ReduceOp.MAX, stacked.max(0).values),
                             (dist.ReduceOp.MIN, stacked.min(0).values)):
                t = data(rank, n, dtype)
                dist.all_reduce(t, op=op)
                assert torch.equal(t, want.to(dtype)), (dtype, n, op)
            if dtype.is_floating_point:
                t = data(rank, n, dtype)
                dist.all_reduce(t, op=dist.ReduceOp.AVG)
                torch.testing.assert_close(t, (stacked.sum(0) / world).to(dtype))
            else:
                t = data(rank, n, dtype) % 3 + 1
                dist.all_reduce(t, op=dist.ReduceOp.PRODUCT)
                assert torch.equal(t, (torch.stack(everyone) % 3 + 1).prod(0).to(dtype))
            # all_gather_into_tensor and the list form
            out = torch.empty(world * n, dtype=dtype)
            dist.all_gather_into_tensor(out, data(rank, n, dtype))
            assert torch.equal(out, torch.cat(everyone))
            outs = [torch.empty(n, dtype=dtype) for _ in range(world)]
            dist.all_gather(outs, data(rank, n, dtype))
            assert all(torch.equal(o, e) for o, e in zip(outs, everyone))
            # reduce_scatter_tensor and the list form
            send = data(rank, world * n, dtype, salt=1)
            got = torch.empty(n, dtype=dtype)
            dist.reduce_scatter_tensor(got, send)
            total = torch.stack(ref(world * n, dtype, salt=1)).to(torch.float64).sum(0)
            assert torch.equal(got, total[rank * n:(rank + 1) * n].to(dtype))
            got = torch.empty(n, dtype=dtype)
            dist.reduce_scatter(got, list(send.split(n)))
            assert torch.equal(got, total[rank * n:(rank + 1) * n].to(dtype))
            # broadcast from the last rank
            t = data(rank, n, dtype, salt=2)
            dist.broadcast(t, src=world - 1)
            assert torch.equal(t, data(world - 1, n, dtype, salt=2))
            # all_to_all_single, equal blocks: block r of rank s lands in rank r's block s
            send = data(rank, world * n, dtype, salt=3)
            got = torch.empty_like(send)
            dist.all_to_all_single(got, send)
            want = torch.cat([data(s, world * n, dtype, salt=3)[rank * n:(rank + 1) * n] for s in range(world)])
            assert torch.equal(got, want)
    # all_to_all_single with uneven splits (rows of 3): rank s sends s + d + 1 rows to rank d
    rows = lambda s, d: s + d + 1  # noqa: E731
    send = torch.arange(sum(rows(rank, d) for d in range(world)) * 3, dtype=torch.float32).view(-1, 3) + 1000 * rank
    got = torch.empty(sum(rows(s, rank) for s in range(world)), 3)
    dist.all_to_all_single(got, send, output_split_sizes=[rows(s, rank) for s in range(world)],
                           input_split_sizes=[rows(rank, d) for d in range(world)])
    parts = []
    for s in range(world):
        theirs = torch.arange(sum(rows(s, d) for d in range(world)) * 3, dtype=torch.float32).view(-1, 3) + 1000 * s
        start = sum(rows(s, d) for d in range(rank))
        parts.append(theirs[start:start + rows(s, rank)])
    assert torch.equal(got, torch.cat(parts))
    # all_to_all of lists, sizes per pair
    ins = [torch.full((rank + d + 1,), float(10 * rank + d)) for d in range(world)]
    outs = [torch.empty(s + rank + 1) for s in range(world)]
    dist.all_to_all(outs, ins)
    assert all(torch.equal(o, torch.full((s + rank + 1,), float(10 * s + rank))) for s, o in enumerate(outs))
    # async Work: calls queued in order, each Work done when it ran, its future holds the tensor
    t = data(rank, 5, torch.float32)
    works = [dist.all_reduce(t, async_op=True) for _ in range(3)]
    big = torch.full((1 << 18,), float(rank))
    works.append(dist.all_reduce(big, async_op=True))
    assert all(w.wait() for w in works)
    assert all(w.get_future().done() for w in works)
    assert torch.equal(works[0].get_future().wait()[0], t)
    assert torch.equal(t, sum(data(r, 5, torch.float32) for r in range(world)) * world ** 2)
    assert torch.equal(big, torch.full((1 << 18,), float(sum(range(world)))))
    chained = dist.all_reduce(torch.ones(3), async_op=True).get_future().then(lambda f: f.value()[0] * 2)
    assert torch.equal(chained.wait(), torch.full((3,), 2.0 * world))
    # An error in a queued call reaches wait() (and the future), and the calls after it still run.
    bad = dist.all_reduce(torch.ones(4, dtype=torch.int32), op=dist.ReduceOp.AVG, async_op=True)
    expect_raises("AVG on integers, async", bad.wait, "floating-point")
    assert bad.get_future().done()
    dist.barrier()
    # send / recv around a ring: one small message, one of several 1 MiB chunks
    if world > 1:
        nxt, prv = (rank + 1) % world, (rank - 1) % world
        for n in (3, (5 << 20) // 4 + 17):
            t = torch.empty(n)
            if rank % 2 == 0:
                dist.send(data(rank, n, torch.float32, salt=4), nxt)
                dist.recv(t, prv)
            else:
                dist.recv(t, prv)
                dist.send(data(rank, n, torch.float32, salt=4), nxt)
            assert torch.equal(t, data(prv, n, torch.float32, salt=4)), n
        reqs = dist.batch_isend_irecv([dist.P2POp(dist.isend, data(rank, 9, torch.float32, salt=5), nxt),
                                       dist.P2POp(dist.irecv, t := torch.empty(9), prv)])
        for r in reqs:
            r.wait()
        assert torch.equal(t, data(prv, 9, torch.float32, salt=5))
    # a group of every rank works; a group of fewer ranks raises on its members
    everyone = dist.new_group(list(range(world)))
    t = data(rank, 4, torch.int64)
    dist.all_reduce(t, group=everyone)
    assert torch.equal(t, torch.stack(ref(4, torch.int64)).sum(0))
    rooted_calls(rank, list(range(world)), dist.group.WORLD)
    if world > 1:  # every rank calls new_group; only its member (rank 0) makes the backend
        alone = dist.new_group([0])
        if rank == 0:
            t = torch.full((5,), 3.0)
            dist.all_reduce(t, group=alone)
            assert torch.equal(t, torch.full((5,), 3.0))
    assert td.runtime() is not None and td.runtime().n_pes == world
    assert dist.get_backend() == "tessera"


def rooted_calls(rank, ranks, g):
    """reduce, gather and scatter on group g (ranks) against their references."""
    me, n = ranks.index(rank), len(ranks)
    for count, dtype in ((1, torch.float32), (9, torch.int64), (3000, torch.bfloat16)):
        root = ranks[-1]  # a global rank, as torch.distributed takes it
        t = data(rank, count, dtype, salt=5)
        mine = t.clone()
        dist.reduce(t, dst=root, op=dist.ReduceOp.SUM, group=g)
        want = sum(data(r, count, dtype, salt=5).to(torch.float64) for r in ranks).to(dtype)
        assert torch.equal(t, want if rank == root else mine), (ranks, "reduce", count)
        outs = [torch.empty(count, dtype=dtype) for _ in ranks] if rank == ranks[0] else None
        dist.gather(data(rank, count, dtype, salt=6), gather_list=outs, dst=ranks[0], group=g)
        if rank == ranks[0]:
            assert all(torch.equal(o, data(r, count, dtype, salt=6)) for o, r in zip(outs, ranks)), "gather"
        got = torch.empty(count, dtype=dtype)
        parts = [data(1000 + r, count, dtype) for r in ranks] if rank == root else None
        dist.scatter(got, scatter_list=parts, src=root, group=g)
        assert torch.equal(got, data(1000 + rank, count, dtype)), (ranks, "scatter", count)


def sub_group_calls(rank, ranks, g, count):
    """Every collective on sub-group g (ranks) against its reference, `count` elements a rank."""
    me, n = ranks.index(rank), len(ranks)
    t = data(rank, count, torch.float32)
    dist.all_reduce(t, group=g)
    assert torch.equal(t, sum(data(r, count, torch.float32) for r in ranks)), (ranks, "all_reduce")
    t = data(rank, count, torch.bfloat16)
    dist.all_reduce(t, op=dist.ReduceOp.MAX, group=g)
    assert torch.equal(t, torch.stack([data(r, count, torch.bfloat16) for r in ranks]).max(0).values)
    out = torch.empty(n * count, dtype=torch.int64)
    dist.all_gather_into_tensor(out, data(rank, count, torch.int64), group=g)
    assert torch.equal(out, torch.cat([data(r, count, torch.int64) for r in ranks])), (ranks, "all_gather")
    outs = [torch.empty(count) for _ in ranks]
    dist.all_gather(outs, data(rank, count, torch.float32), group=g)
    assert all(torch.equal(o, data(r, count, torch.float32)) for o, r in zip(outs, ranks))
    o = torch.empty(count)
    dist.reduce_scatter_tensor(o, data(rank, n * count, torch.float32, salt=1), group=g)
    want = sum(data(r, n * count, torch.float32, salt=1) for r in ranks)[me * count:(me + 1) * count]
    assert torch.equal(o, want), (ranks, "reduce_scatter")
    b = data(rank, count, torch.float16, salt=2)
    dist.broadcast(b, src=ranks[-1], group=g)  # src: a global rank
    assert torch.equal(b, data(ranks[-1], count, torch.float16, salt=2)), (ranks, "broadcast")
    a = data(rank, n * count, torch.int32, salt=3)
    ao = torch.empty_like(a)
    dist.all_to_all_single(ao, a, group=g)
    want = torch.cat([data(r, n * count, torch.int32, salt=3)[me * count:(me + 1) * count] for r in ranks])
    assert torch.equal(ao, want), (ranks, "all_to_all")
    rows = [1 + (me + q) % n for q in range(n)]  # uneven splits
    v = data(rank, sum(rows), torch.float32, salt=4)
    got = [1 + (q + me) % n for q in range(n)]
    vo = torch.empty(sum(got))
    dist.all_to_all_single(vo, v, output_split_sizes=got, input_split_sizes=rows, group=g)
    parts = []
    for q, r in enumerate(ranks):
        theirs = [1 + (q + x) % n for x in range(n)]
        start = sum(theirs[:me])
        parts.append(data(r, sum(theirs), torch.float32, salt=4)[start:start + theirs[me]])
    assert torch.equal(vo, torch.cat(parts)), (ranks, "all_to_all_v")
    dist.barrier(group=g)


def subgroups(rank, world):
    from torch.nn.parallel import DistributedDataParallel as DDP

    # Every rank calls new_group for every group; the members of each make its backend. Pairs of
    # neighbours and strided columns overlap; the staging is 64 KiB (the job sets it), so the
    # 20000-element calls move in pieces.
    layouts = [list(range(0, world, 2)), list(range(1, world, 2)), [0, 1], [world - 2, world - 1],
               list(range(1, world))]
    groups = [(ranks, dist.new_group(ranks)) for ranks in layouts]
    for ranks, g in groups:
        if rank in ranks:
            for count in (1, 7, 20000):
                sub_group_calls(rank, ranks, g, count)
            rooted_calls(rank, ranks, g)
    # DDP on a sub-group (the even ranks) against gloo on the same ranks.
    even = layouts[0]
    tg, gg = groups[0][1], dist.new_group(even, backend="gloo")
    if rank in even:
        models = {"tessera": DDP(mlp(2), process_group=tg), "gloo": DDP(mlp(2), process_group=gg)}
        train_side_by_side(models, rank, steps=5)
        for a, b in zip(models["tessera"].module.parameters(), models["gloo"].module.parameters()):
            torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-6)
    # Refused, on the members: ranks not evenly spaced; send/recv; more sub-groups than reserved.
    uneven = [0, 1, 3]
    if rank in uneven:
        expect_raises("uneven", lambda: dist.new_group(uneven), "not evenly spaced")
    else:
        dist.new_group(uneven)
    # send/recv on a sub-group (through the world group's mailboxes): the odd ranks' ring.
    odd, og = groups[1]
    if rank in odd and len(odd) > 1:
        me = odd.index(rank)
        nxt, prv = odd[(me + 1) % len(odd)], odd[(me - 1) % len(odd)]  # global ranks, as dist takes
        big = data(rank, 300000, torch.float32, salt=7)  # more than one 1 MiB slot
        got = torch.empty_like(big)
        if me % 2 == 0:
            dist.send(big, dst=nxt, group=og)
            dist.recv(got, src=prv, group=og)
        else:
            dist.recv(got, src=prv, group=og)
            dist.send(big, dst=nxt, group=og)
        assert torch.equal(got, data(prv, 300000, torch.float32, salt=7)), "sub-group send/recv"
    taken = len(layouts)  # slots taken so far: the groups above (the uneven one took none)
    for i in range(td.SUBGROUP_SLOTS - taken):
        dist.new_group([0, 1])
    if rank in (0, 1):
        expect_raises("slots", lambda: dist.new_group([0, 1]), f"reserved {td.SUBGROUP_SLOTS}")
    else:
        dist.new_group([0, 1])
    dist.destroy_process_group(gg)


def bad_input(rank, world):
    t = torch.ones(4, dtype=torch.float64)
    expect_raises("float64", lambda: dist.all_reduce(t), "float64", "supported")
    expect_raises("non-contiguous", lambda: dist.all_reduce(torch.ones(4, 4).t()), "not contiguous")
    expect_raises("BAND", lambda: dist.all_reduce(torch.ones(4, dtype=torch.int32), op=dist.ReduceOp.BAND),
                  "not supported")
    expect_raises("AVG on integers", lambda: dist.all_reduce(torch.ones(4, dtype=torch.int32), op=dist.ReduceOp.AVG),
                  "floating-point")
    expect_raises("PRODUCT on floats", lambda: dist.all_reduce(torch.ones(4), op=dist.ReduceOp.PRODUCT), "prod")
    expect_raises("output size", lambda: dist.all_gather_into_tensor(torch.empty(world * 4 + 1), torch.ones(4)),
                  "expected")
    # Sizes that differ across ranks: every rank raises, naming the calls.
    expect_raises("sizes differ", lambda: dist.all_reduce(torch.ones(10 + rank)), "ranks made different calls")
    # ... and the group still works afterwards.
    t = torch.ones(6)
    dist.all_reduce(t)
    assert torch.equal(t, torch.full((6,), float(world)))


def mlp(seed):
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(16, 64), torch.nn.GELU(), torch.nn.Linear(64, 8))


def batch(rank, step):
    g = torch.Generator().manual_seed(7919 * step + rank)
    return torch.randn(12, 16, generator=g), torch.randn(12, 8, generator=g)


def train_side_by_side(models, rank, steps):
    """Trains every model of `models` (name -> DDP model) `steps` SGD steps on this rank's same
    batches, the models' steps interleaved (each step's collectives in the same order on every
    rank)."""
    opts = {k: torch.optim.SGD(m.parameters(), lr=0.05) for k, m in models.items()}
    for step in range(steps):
        x, y = batch(rank, step)
        for k, m in models.items():
            opts[k].zero_grad()
            torch.nn.functional.mse_loss(m(x), y).backward()
            opts[k].step()


def ddp(rank, world):
    from torch.nn.parallel import DistributedDataParallel as DDP

    gloo = dist.new_group(backend="gloo")
    models = {"tessera": DDP(mlp(1)), "gloo": DDP(mlp(1), process_group=gloo)}
    train_side_by_side(models, rank, steps=20)
    for (name, a), b in zip(models["tessera"].module.named_parameters(), models["gloo"].module.parameters()):
        if world <= 2:  # a + b is the same float whichever rank's value comes first
            assert torch.equal(a, b), name
        else:
            torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-6)
    dist.destroy_process_group(gloo)


def fsdp(rank, world):
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import fully_shard

    mesh = init_device_mesh("cpu", (world,))
    model = mlp(2)
    for layer in model:
        if isinstance(layer, torch.nn.Linear):
            fully_shard(layer, mesh=mesh)
    fully_shard(model, mesh=mesh)
    reference = mlp(2)  # one process, every rank's batch at once
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    ref_opt = torch.optim.SGD(reference.parameters(), lr=0.05)
    for step in range(5):
        x, y = batch(rank, step)
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        xs, ys = zip(*(batch(r, step) for r in range(world)))
        ref_opt.zero_grad()
        ref_loss = torch.nn.functional.mse_loss(reference(torch.cat(xs)), torch.cat(ys))
        ref_loss.backward()
        ref_opt.step()
        losses = torch.stack([loss.detach()])
        dist.all_reduce(losses, op=dist.ReduceOp.AVG)
        torch.testing.assert_close(losses[0], ref_loss.detach(), rtol=1e-5, atol=1e-6)


def rank_dies(rank, world):
    t = torch.ones(1000)
    for step in range(5):
        if step == 2 and rank == 1:
            os._exit(7)
        try:
            dist.all_reduce(t)
        except (tessera.PeerLostError, tessera.TimeoutError) as e:
            say(f"rank {rank}: saw {type(e).__name__} at step {step}")
            os._exit(0)
    raise AssertionError("rank 1 died, but every all_reduce returned")


def shared_runtime():
    """A runtime the program started itself serves the group and tessera.torch's ops alike, and
    outlives the group (the program finalizes it)."""
    import tessera.torch as tt

    rt = tessera.init()
    td.set_runtime(rt)
    dist.init_process_group("tessera")
    rank, world = dist.get_rank(), dist.get_world_size()
    assert td.runtime() is rt and (rt.pe, rt.n_pes) == (rank, world)
    t = data(rank, 8, torch.float32)
    dist.all_reduce(t)
    assert torch.equal(t, torch.stack([data(r, 8, torch.float32) for r in range(world)]).sum(0))
    a = torch.full((2, 3), float(rank + 1))
    c = tt.ag_gemm(rt, a, torch.eye(3))  # every rank's rows, gathered by the fused op
    assert torch.equal(c, torch.cat([torch.full((2, 3), float(r + 1)) for r in range(world)]))
    tt.release(rt)
    dist.destroy_process_group()
    assert rt.valid, "the group finalized a runtime it did not start"
    rt.finalize()
    say(f"rank {rank}: ok shared-runtime")


def main(scenario):
    if scenario == "shared-runtime":
        return shared_runtime()
    dist.init_process_group("tessera")
    rank, world = dist.get_rank(), dist.get_world_size()
    {"collectives": collectives, "bad-input": bad_input, "ddp": ddp, "fsdp": fsdp,
     "rank-dies": rank_dies, "subgroups": subgroups}[scenario](rank, world)
    dist.destroy_process_group()
    assert td.runtime() is None, "the backend's runtime outlived its last group"
    say(f"rank {rank}: ok {scenario}")


if __name__ == "__main__":
    main(sys.argv[1])
