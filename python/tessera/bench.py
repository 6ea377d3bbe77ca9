"""python -m tessera.bench: Tessera from Python, against the same call from C++ and against
torch.distributed (gloo, CPU tensors). Run it under a launcher, like tessera-bench:

    tessera-run -np 2 python -m tessera.bench all --json

Benches: `overhead` (rt.barrier() and ops.all_gather + synchronize at small sizes, the Python
loop against the same loop in C++: the µs the binding adds per call), `all_gather` (ops.all_gather
vs torch.distributed.all_gather), `all_to_all` (tessera.ops.all_to_all, and an exchange of equal
chunks by rt.put, vs torch.distributed.all_to_all_single), `all_reduce` (sum, fp32 and bf16: the
"tessera" c10d backend on an ordinary tensor and tessera.torch.all_reduce on a symmetric one, vs
gloo) and `ddp` (a DDP step of an 8.9 M-parameter MLP on "tessera" vs gloo); the last two need
torch and every PE on one node. Rows carry tessera-bench's fields
(`bench`, `variant`, `pes`, `bytes`, `iters`, `time_us`, `limit_time_us`, `peer_time_us`,
`fraction_of_limit`, `speedup_vs_peer`) plus the bench's own; PE 0 prints them. `bytes` is what
each PE sends."""

import argparse
import json
import os
import tempfile
import time
import zlib

import numpy as np

import tessera
from tessera import _tessera

DEFAULT_SIZES = "4K,64K,1M,16M"


def parse_size(text):
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    text = text.strip().upper()
    return int(text[:-1]) * units[text[-1]] if text[-1] in units else int(text)


def row(bench, variant, rt, nbytes, iters, time_us, peer_time_us=None, peer_note=None, **extra):
    r = {"bench": bench, "variant": variant, "pes": rt.n_pes, "bytes": nbytes, "iters": iters,
         "time_us": time_us, "limit_time_us": None, "peer_time_us": peer_time_us,
         "fraction_of_limit": None,
         "speedup_vs_peer": peer_time_us / time_us if peer_time_us and time_us > 0 else None}
    if peer_time_us is None and peer_note:
        r["peer_note"] = peer_note
    r.update(extra)
    return r


def per_call_us(rt, call, iters):
    """µs per call of `iters` back-to-back calls, after a warm-up call; the job starts together."""
    call()
    rt.barrier()
    start = time.perf_counter()
    for _ in range(iters):
        call()
    return (time.perf_counter() - start) * 1e6 / iters


def alternate(rt, cpp_loop, py_call, iters, rounds=3):
    """(C++ µs, Python µs) per call: the best of `rounds` loops of each, taken in turn after a
    warm-up of each, so both see the same machine (a shared one is noisy)."""
    cpp_loop(1)
    per_call_us(rt, py_call, 1)
    cpp, py = [], []
    for _ in range(rounds):
        rt.barrier()
        cpp.append(cpp_loop(iters))
        py.append(per_call_us(rt, py_call, iters))
    return min(cpp), min(py)


def gather_call(rt, send, recv):
    """One complete all_gather of `send` into `recv`, as a user would call it."""
    def gather():
        tessera.ops.all_gather(rt, send, recv)
        rt.synchronize()

    return gather


def bench_overhead(rt, sizes, iters):
    rows = []
    cpp, py = alternate(rt, lambda n: _tessera._cpp_loop_us(rt, "barrier", n), rt.barrier, iters)
    rows.append(row("python_overhead", "barrier", rt, 0, iters, py, cpp, added_us=py - cpp,
                    cpp_time_us=cpp))
    for nbytes in sizes:
        send = np.ones(nbytes, np.uint8)
        with rt.empty(nbytes * rt.n_pes, "uint8") as recv:
            cpp, py = alternate(
                rt, lambda n: _tessera._cpp_loop_us(rt, "all_gather", n, send, recv),
                gather_call(rt, send, recv), iters)
        rows.append(row("python_overhead", "all_gather", rt, nbytes, iters, py, cpp,
                        added_us=py - cpp, cpp_time_us=cpp))
    return rows


def gloo_group(rt, store_dir):
    """torch.distributed with gloo over a FileStore in PE 0's `store_dir`, its path put on every
    PE."""
    import torch.distributed as dist

    path = np.zeros(256, np.uint8)
    with rt.zeros(256, "uint8") as shared:
        if rt.pe == 0:
            name = os.path.join(store_dir, "store").encode()
            path[: len(name)] = np.frombuffer(name, np.uint8)
            for pe in range(rt.n_pes):
                rt.put(shared, path, pe)
        rt.barrier()
        rt.get(path, shared, rt.pe)
    store_path = bytes(path).rstrip(b"\0").decode()
    global _STORE_PATH
    _STORE_PATH = store_path
    dist.init_process_group("gloo", store=dist.FileStore(store_path, rt.n_pes), rank=rt.pe,
                            world_size=rt.n_pes)
    return dist


def bench_all_gather(rt, sizes, iters, dist):
    rows = []
    for nbytes in sizes:
        send = np.ones(nbytes, np.uint8)
        with rt.empty(nbytes * rt.n_pes, "uint8") as recv:
            ours = per_call_us(rt, gather_call(rt, send, recv), iters)
        peer = None
        if dist is not None:
            import torch

            t = torch.ones(nbytes, dtype=torch.uint8)
            outs = [torch.empty_like(t) for _ in range(rt.n_pes)]
            peer = per_call_us(rt, lambda: dist.all_gather(outs, t), iters)
        rows.append(row("python_all_gather", "numpy", rt, nbytes, iters, ours, peer,
                        peer_note="torch.distributed not importable"))
    return rows


def bench_all_to_all(rt, sizes, iters, dist):
    rows = []
    for nbytes in sizes:
        chunk = max(1, nbytes // rt.n_pes)
        send = np.ones((rt.n_pes, chunk), np.uint8)
        with rt.empty((rt.n_pes, chunk), "uint8") as recv:
            mine = np.from_dlpack(recv)[rt.pe]  # where every PE's chunk for this PE lands

            def exchange():
                for i in range(rt.n_pes):
                    pe = (rt.pe + i) % rt.n_pes
                    rt.put(mine, send[pe], pe)
                rt.barrier()

            ours = per_call_us(rt, exchange, iters)
        # tessera.ops.all_to_all (int32 elements: the same bytes in whole int32s) reads and writes
        # peers' heaps directly, so it runs only when every peer is mapped (one node).
        words = max(1, chunk // 4)
        ours_op = None
        if all(rt.transport(p) in ("self", "mapped") for p in range(rt.n_pes)):
            send32 = np.ones(rt.n_pes * words, np.int32)
            with rt.empty(rt.n_pes * words, "int32") as recv32:

                def op_call():
                    tessera.ops.all_to_all(rt, send32, recv32)
                    rt.synchronize()

                ours_op = per_call_us(rt, op_call, iters)
                rt.barrier()
        peer = None
        if dist is not None:
            import torch

            t = torch.ones(rt.n_pes * chunk, dtype=torch.uint8)
            out = torch.empty_like(t)
            peer = per_call_us(rt, lambda: dist.all_to_all_single(out, t), iters)
        rows.append(row("python_all_to_all", "put_exchange", rt, chunk * rt.n_pes, iters, ours,
                        peer, peer_note="torch.distributed not importable"))
        if ours_op is not None:
            rows.append(row("python_all_to_all", "ops", rt, words * 4 * rt.n_pes, iters, ours_op,
                            peer, peer_note="torch.distributed not importable"))
    return rows


_STORE_PATH = None  # the gloo group's FileStore, the same path on every PE


def deepspeed_all_reduce(rt):
    """DeepSpeed's CPU shared-memory all-reduce (deepspeed.comm.inference_all_reduce, its
    deepspeed_shm_comm_op built on first use) as (call, None), or (None, why not)."""
    os.environ.setdefault("DS_ACCELERATOR", "cpu")  # before deepspeed picks its accelerator
    try:
        import deepspeed
        import deepspeed.comm as dc
        import torch
    except ImportError:
        return None, "deepspeed is not installed (pip install deepspeed)"
    # Its shm op runs when every rank is local (LOCAL_SIZE) and names its segments after
    # MASTER_ADDR/MASTER_PORT: the same on every PE, unique to this job's store.
    os.environ["LOCAL_SIZE"] = str(rt.n_pes)
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", str(20000 + zlib.crc32(_STORE_PATH.encode()) % 30000))
    deepspeed.init_distributed(dist_backend="gloo")  # the gloo group already made
    if not hasattr(torch.ops, "deepspeed") or not hasattr(torch.ops.deepspeed, "inference_all_reduce_"):
        return None, "deepspeed's shm all-reduce op did not build here"
    return (lambda t: dc.inference_all_reduce(t)), None


def tessera_group(rt, dist):
    """A torch.distributed group of every PE on the "tessera" backend, over `rt` (set_runtime),
    beside the default gloo group."""
    import tessera.distributed as td

    td.set_runtime(rt)
    return dist.new_group(backend="tessera")


def bench_all_reduce(rt, sizes, iters, dist):
    """Sum all-reduce of `bytes` per PE, fp32 and bf16: through the c10d backend on an ordinary
    tensor (staged through the heap) and through tessera.torch.all_reduce in place on a symmetric
    tensor, against gloo's dist.all_reduce of the same tensor (the peer) and DeepSpeed's shm
    inference_all_reduce where deepspeed is installed (deepspeed_time_us, speedup_vs_deepspeed)."""
    import torch

    import tessera.torch as tt

    group = tessera_group(rt, dist)
    ds_call, ds_note = deepspeed_all_reduce(rt) if rt.n_pes > 1 else (None, "one PE")
    rows = []
    for dtype in (torch.float32, torch.bfloat16):
        name = str(dtype).replace("torch.", "")
        for nbytes in sizes:
            count = max(1, nbytes // dtype.itemsize)
            t = torch.ones(count, dtype=dtype)
            peer = per_call_us(rt, lambda: dist.all_reduce(t), iters)
            c10d = per_call_us(rt, lambda: dist.all_reduce(t, group=group), iters)
            sym = tt.zeros(rt, (count,), dtype=dtype)
            symmetric = per_call_us(rt, lambda: tt.all_reduce(rt, sym, sym), iters)
            rt.barrier()
            tt.free(sym)
            ds = {"deepspeed_note": ds_note}
            if ds_call is not None:
                ds_us = per_call_us(rt, lambda: ds_call(t), iters)
                ds = {"deepspeed_time_us": ds_us}
            for variant, us in (("c10d_" + name, c10d), ("symmetric_" + name, symmetric)):
                extra = dict(ds)
                if "deepspeed_time_us" in ds:
                    extra["speedup_vs_deepspeed"] = ds["deepspeed_time_us"] / us
                rows.append(row("python_all_reduce", variant, rt, count * dtype.itemsize, iters, us, peer,
                                peer_name="gloo", dtype=name, **extra))
    dist.destroy_process_group(group)
    return rows


def bench_ddp(rt, iters, dist):
    """One DDP training step (forward, backward with the gradient all-reduce, SGD) of an 8.9 M
    parameter MLP on the "tessera" c10d backend against the same on gloo."""
    import torch
    from torch.nn.parallel import DistributedDataParallel as DDP

    def model():
        torch.manual_seed(0)
        return torch.nn.Sequential(torch.nn.Linear(1024, 4096), torch.nn.GELU(), torch.nn.Linear(4096, 1024),
                                   torch.nn.GELU(), torch.nn.Linear(1024, 512))

    group = tessera_group(rt, dist)
    x, y = torch.randn(32, 1024), torch.randn(32, 512)
    times = {}
    for name, pg in (("tessera", group), ("gloo", None)):
        m = DDP(model(), process_group=pg)
        opt = torch.optim.SGD(m.parameters(), lr=1e-3)

        def step():
            opt.zero_grad()
            torch.nn.functional.mse_loss(m(x), y).backward()
            opt.step()

        times[name] = per_call_us(rt, step, iters)
        params = sum(p.numel() for p in m.parameters())
    dist.destroy_process_group(group)
    return [row("python_ddp_step", "mlp_10m", rt, params * 4, iters, times["tessera"], times["gloo"],
                peer_name="gloo", params=params)]


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m tessera.bench", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("bench", choices=["overhead", "all_gather", "all_to_all", "all_reduce", "ddp", "all"])
    parser.add_argument("--sizes", default=None,
                        help=f"bytes per PE, e.g. 4K,1M (default {DEFAULT_SIZES}; overhead: 8,4K)")
    parser.add_argument("--iters", type=int, default=50)
    parser.add_argument("--json", action="store_true", help="one JSON object a line")
    args = parser.parse_args(argv)
    with tessera.init() as rt:
        rows = []
        if args.bench in ("overhead", "all"):
            rows += bench_overhead(rt, [parse_size(s) for s in (args.sizes or "8,4K").split(",")],
                                   args.iters)
        if args.bench in ("all_gather", "all_to_all", "all_reduce", "ddp", "all"):
            sizes = [parse_size(s) for s in (args.sizes or DEFAULT_SIZES).split(",")]
            # PE 0's store directory is removed on the way out, however the run ends.
            with tempfile.TemporaryDirectory(prefix="tessera-bench-") as store_dir:
                try:
                    dist = gloo_group(rt, store_dir)
                except ImportError:
                    dist = None
                if args.bench in ("all_gather", "all"):
                    rows += bench_all_gather(rt, sizes, args.iters, dist)
                if args.bench in ("all_to_all", "all"):
                    rows += bench_all_to_all(rt, sizes, args.iters, dist)
                mapped = all(rt.transport(p) in ("self", "mapped") for p in range(rt.n_pes))
                if dist is not None and mapped and args.bench in ("all_reduce", "all"):
                    rows += bench_all_reduce(rt, sizes, args.iters, dist)
                if dist is not None and mapped and args.bench in ("ddp", "all"):
                    rows += bench_ddp(rt, max(2, args.iters // 10), dist)
                if dist is not None:
                    dist.destroy_process_group()
                rt.barrier()  # no PE still uses the store when PE 0 removes it
        if rt.pe == 0:
            for r in rows:
                if args.json:
                    print(json.dumps(r), flush=True)
                else:
                    peer = f"{r['peer_time_us']:.1f}" if r["peer_time_us"] else "-"
                    print(f"{r['bench']:18} {r['variant']:12} pes={r['pes']} bytes={r['bytes']:>9} "
                          f"time_us={r['time_us']:.1f} peer_time_us={peer}", flush=True)


if __name__ == "__main__":
    main()
