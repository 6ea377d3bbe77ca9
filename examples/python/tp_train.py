"""A transformer MLP block trained with tensor and sequence parallelism on Tessera, checked against
the same model in one process and timed beside the same model on gloo collectives + torch.matmul.

    torchrun --nproc-per-node 2 examples/python/tp_train.py [--steps 50] [--tokens 256]
             [--hidden 256] [--ffn 1024]

Each rank holds tokens/P rows of the sequence (sequence parallel) and 1/P of each weight (tensor
parallel): x -> RMSNorm -> up projection, column-parallel through tessera.torch.ag_gemm (the
sequence's all-gather fused with the GEMM) -> GELU -> down projection, row-parallel through
tessera.torch.gemm_rs (the GEMM fused with the reduce-scatter back to sequence shards) -> + x.
Backward runs through the ops' autograd (gemm_rs <-> ag_gemm); the RMSNorm weight, replicated,
has its gradient summed over ranks by dist.all_reduce on the "tessera" c10d backend. The loss is
the mean squared error against a target over every token.

Prints each rank's loss curve against one process training the whole model on the whole
sequence (the same initial weights; it must agree within 1e-5 relative in fp32, else exit 1), and
the step time of the Tessera model beside the same sharded model whose all-gather and
reduce-scatter are gloo collectives around torch.matmul.
"""

import argparse
import sys
import time

import torch
import torch.distributed as dist

import tessera.distributed as td
import tessera.torch as tt

EPS = 1e-6


def rmsnorm(x, weight):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + EPS) * weight


def full_weights(hidden, ffn):
    """The whole model's initial weights, the same on every rank (one seed)."""
    g = torch.Generator().manual_seed(1234)
    return {"norm": 1 + 0.1 * torch.randn(hidden, generator=g),
            "up": torch.randn(hidden, ffn, generator=g) / hidden ** 0.5,
            "down": torch.randn(ffn, hidden, generator=g) / ffn ** 0.5}


def data(step, tokens, hidden):
    g = torch.Generator().manual_seed(99 + step)
    return torch.randn(tokens, hidden, generator=g), torch.randn(tokens, hidden, generator=g)


class Block(torch.nn.Module):
    """This rank's part of the block: RMSNorm weight (replicated), columns of up, rows of down."""

    def __init__(self, weights, rank, world):
        super().__init__()
        f = weights["up"].shape[1] // world
        self.norm = torch.nn.Parameter(weights["norm"].clone())
        self.up = torch.nn.Parameter(weights["up"][:, rank * f:(rank + 1) * f].clone())
        self.down = torch.nn.Parameter(weights["down"][rank * f:(rank + 1) * f].clone())


def tessera_forward(block, rt, x_shard):
    h = tt.ag_gemm(rt, rmsnorm(x_shard, block.norm), block.up)  # (tokens, ffn / P)
    return x_shard + tt.gemm_rs(rt, torch.nn.functional.gelu(h), block.down)  # (tokens / P, hidden)


class _GatherRows(torch.autograd.Function):
    """all_gather of the sequence shards on a gloo group; backward: reduce-scatter, which gloo
    lacks, as an all_reduce and this rank's rows."""

    @staticmethod
    def forward(ctx, x, group):
        ctx.group = group
        out = x.new_empty((dist.get_world_size(group) * x.shape[0], *x.shape[1:]))
        dist.all_gather_into_tensor(out, x.contiguous(), group=group)
        return out

    @staticmethod
    def backward(ctx, grad):
        return _rows_of_sum(grad, ctx.group), None


class _ReduceScatterRows(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, group):
        ctx.group = group
        return _rows_of_sum(x, group)

    @staticmethod
    def backward(ctx, grad):
        return _GatherRows.forward(ctx, grad, ctx.group), None


def _rows_of_sum(x, group):
    total = x.contiguous().clone()
    dist.all_reduce(total, group=group)
    rows = x.shape[0] // dist.get_world_size(group)
    rank = dist.get_rank(group)
    return total[rank * rows:(rank + 1) * rows]


def gloo_forward(block, group, x_shard):
    h = _GatherRows.apply(rmsnorm(x_shard, block.norm), group) @ block.up
    return x_shard + _ReduceScatterRows.apply(torch.nn.functional.gelu(h) @ block.down, group)


def train(block, forward, steps, tokens, hidden, rank, world, grad_group, lr=0.1):
    """Loss curve (whole-model loss at each step) and the median seconds of a step (the first
    step, which builds the ops' workspaces, is left out of the median)."""
    opt = torch.optim.SGD(block.parameters(), lr=lr)
    rows = tokens // world
    losses, times = [], []
    for step in range(steps):
        start = time.perf_counter()
        x, target = data(step, tokens, hidden)
        x, target = x[rank * rows:(rank + 1) * rows], target[rank * rows:(rank + 1) * rows]
        opt.zero_grad()
        out = forward(x)
        loss = (out - target).pow(2).sum() / (tokens * hidden)  # this rank's part of the mean
        loss.backward()
        dist.all_reduce(block.norm.grad, group=grad_group)  # replicated weight: sum over ranks
        opt.step()
        whole = loss.detach().clone()
        dist.all_reduce(whole, group=grad_group)
        losses.append(whole.item())
        times.append(time.perf_counter() - start)
    later = sorted(times[1:] or times)
    return losses, later[len(later) // 2]


def train_one_process(weights, steps, tokens, hidden, lr=0.1):
    params = {k: torch.nn.Parameter(v.clone()) for k, v in weights.items()}
    opt = torch.optim.SGD(params.values(), lr=lr)
    losses = []
    for step in range(steps):
        x, target = data(step, tokens, hidden)
        opt.zero_grad()
        h = torch.nn.functional.gelu(rmsnorm(x, params["norm"]) @ params["up"])
        loss = (x + h @ params["down"] - target).pow(2).mean()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=50)
    p.add_argument("--tokens", type=int, default=256)
    p.add_argument("--hidden", type=int, default=256)
    p.add_argument("--ffn", type=int, default=1024)
    args = p.parse_args()

    dist.init_process_group("tessera")
    rank, world = dist.get_rank(), dist.get_world_size()
    if args.tokens % world or args.ffn % world:
        raise SystemExit(f"--tokens ({args.tokens}) and --ffn ({args.ffn}) must divide by {world} ranks")
    rt = td.runtime()
    gloo = dist.new_group(backend="gloo")
    weights = full_weights(args.hidden, args.ffn)
    shape = (args.steps, args.tokens, args.hidden, rank, world)

    block = Block(weights, rank, world)
    losses, tessera_s = train(block, lambda x: tessera_forward(block, rt, x), *shape, grad_group=None)
    baseline = Block(weights, rank, world)
    gloo_losses, gloo_s = train(baseline, lambda x: gloo_forward(baseline, gloo, x), *shape, grad_group=gloo)
    reference = train_one_process(weights, args.steps, args.tokens, args.hidden)

    worst = max(abs(a - b) / abs(b) for a, b in zip(losses, reference))
    ok = worst <= 1e-5
    if rank == 0:
        every = max(1, args.steps // 10)
        print(f"tp_train: {world} ranks, tokens {args.tokens}, hidden {args.hidden}, ffn {args.ffn}, "
              f"{args.steps} steps")
        print(f"{'step':>5} {'tessera loss':>14} {'one process':>14} {'gloo+matmul':>14}")
        for i in range(0, args.steps, every):
            print(f"{i:5d} {losses[i]:14.8f} {reference[i]:14.8f} {gloo_losses[i]:14.8f}")
        print(f"loss curve vs one process: worst relative difference {worst:.2e} "
              f"({'ok' if ok else 'ABOVE 1e-5'})")
        print(f"step time: tessera {tessera_s * 1e3:.2f} ms, gloo+matmul {gloo_s * 1e3:.2f} ms, "
              f"ratio {gloo_s / tessera_s:.2f}x")
    tt.release(rt)
    dist.destroy_process_group()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
