"""tessera.distributed: Tessera as a ``torch.distributed`` backend, for CPU tensors.

    import tessera.distributed                 # registers the backend "tessera" for device cpu
    dist.init_process_group("tessera")         # or "cpu:tessera,cuda:nccl"
    model = DistributedDataParallel(model)     # DDP, FSDP2 and the c10d calls run unchanged

Each process is one PE. The backend starts its own runtime from the process group's store (rank
0 publishes a bootstrap id through it), so any ``init_method`` works; ``set_runtime(rt)`` before
``init_process_group`` shares a runtime the program made itself (``tessera.init()``), and
``runtime()`` returns the one in use, for tessera.torch's fused ops beside the c10d calls.

Ordinary tensors are staged through symmetric heap buffers the backend owns (grown collectively,
freed when the group is destroyed). Calls run in the order they were made on one thread of the
backend's, so a call returns at once (``async_op=True``: its ``Work`` completes when it has run,
its future with the output tensors; a synchronous call waits for it). A ``new_group`` of fewer ranks (evenly
spaced: a Tessera team is strided) is a Tessera team over a slot of memory the first group of
every rank reserved for sub-groups (``TESSERA_DIST_SUBGROUPS`` slots). See docs/python.md,
"torch.distributed backend".
"""

from __future__ import annotations

import atexit
import datetime
import functools
import os
import queue
import secrets
import socket
import threading
import weakref

import numpy as _np
import torch as _torch
import torch.distributed as _dist
from torch._C._distributed_c10d import Backend as _C10dBackend

from . import _tessera
from . import ops as _ops
from .errors import InvalidArgumentError, TimeoutError as _TimeoutError

BACKEND_NAME = "tessera"

# The runtime every group of this process uses, and whether the backend made it (then it also
# finalizes it when the last group is destroyed). One lock orders every call of every group.
_LOCK = threading.RLock()
_RUNTIME = None
_OWNED = False
_GROUPS = 0  # live ProcessGroupTessera objects on _RUNTIME

# A p2p message moves through one slot per (sender, receiver) pair of this many bytes.
P2P_SLOT_BYTES = 1 << 20

# Sub-groups: the first group of every rank reserves (collectively) this many slots, each a team
# workspace and a staging buffer of SUBGROUP_STAGING_BYTES; a sub-group takes the next slot (a
# counter in that group's store) and keeps it until the reserving group is destroyed. Calls larger
# than the staging buffer move in pieces.
def _env_count(name: str, default: int, least: int) -> int:
    text = os.environ.get(name) or str(default)
    if not text.isdigit() or int(text) < least:
        raise InvalidArgumentError(f"{name}: expected a whole number >= {least}, saw {text!r}")
    return int(text)


SUBGROUP_SLOTS = _env_count("TESSERA_DIST_SUBGROUPS", 8, 0)
SUBGROUP_STAGING_BYTES = _env_count("TESSERA_DIST_SUBGROUP_STAGING", 4 << 20, 64)
_POOL = None  # (owner group, the heap array, its torch view, slot bytes, workspace bytes)

_DTYPES = (_torch.float32, _torch.bfloat16, _torch.float16, _torch.int32, _torch.int64)


def set_runtime(rt) -> None:
    """Makes init_process_group("tessera") use `rt` (a tessera.Runtime this program started)
    instead of starting its own; its PE and size must be the group's rank and size."""
    global _RUNTIME, _OWNED
    with _LOCK:
        if _RUNTIME is not None and _RUNTIME is not rt and _RUNTIME.valid and _GROUPS > 0:
            raise RuntimeError("tessera.distributed.set_runtime: a process group already uses another runtime")
        _RUNTIME, _OWNED = rt, False


def runtime():
    """The tessera.Runtime the backend's groups run on (None before init_process_group)."""
    return _RUNTIME


def _fail(message: str):
    """Bad input: InvalidArgumentError (a ValueError), as the package's own checks raise."""
    raise InvalidArgumentError(f"tessera backend: {message}")


def _bootstrap_host() -> str:
    host = os.environ.get("TESSERA_BOOTSTRAP_ADDR") or os.environ.get("MASTER_ADDR") or "127.0.0.1"
    return socket.gethostbyname(host)


def _start_runtime(store, rank: int, size: int, timeout: datetime.timedelta):
    """A runtime of `size` PEs, this process PE `rank`, bootstrapped through the c10d store."""
    key = "tessera/unique_id"
    if rank == 0:
        host = _bootstrap_host()
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:  # a free port now
            probe.bind((host, 0))
            port = probe.getsockname()[1]
        store.set(key, f"{host}:{port}:{secrets.token_hex(16)}")
    unique_id = store.get(key).decode()
    saved = {k: os.environ.get(k) for k in ("TESSERA_UNIQUE_ID", "TESSERA_RANK", "TESSERA_SIZE")}
    os.environ.update(TESSERA_UNIQUE_ID=unique_id, TESSERA_RANK=str(rank), TESSERA_SIZE=str(size))
    try:
        seconds = None if os.environ.get("TESSERA_TIMEOUT") else max(1.0, timeout.total_seconds())
        rt = _tessera.init(timeout=seconds)
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    if rt.pe != rank or rt.n_pes != size:
        pe, n = rt.pe, rt.n_pes
        rt.finalize()
        _fail(f"the runtime started as PE {pe} of {n} (another launcher's environment, such as "
              f"MPI's, chose it), but the group is rank {rank} of {size}; start the runtime "
              "yourself and pass it to tessera.distributed.set_runtime")
    return rt


def _create(opts, backend_options):
    """The creator init_process_group / new_group call (extended API) on each member: made on
    the backend's thread, after the calls queued before (making a group allocates collectively)."""
    if _WORKER.here():
        return _create_now(opts)
    made = []
    _WORKER.run_now_or_queue(lambda: made.append(_create_now(opts)) or _done([]),
                             opts.timeout * 2 + datetime.timedelta(seconds=10)).wait()
    return made[0]


def _create_now(opts):
    global _RUNTIME, _OWNED, _GROUPS, _POOL
    rank, size = opts.group_rank, opts.group_size
    ranks = list(opts.global_ranks_in_group) or list(range(size))
    with _LOCK:
        if _RUNTIME is None or not _RUNTIME.valid:
            if ranks != list(range(size)):
                _fail("the first group must be the whole world")
            _RUNTIME, _OWNED = _start_runtime(opts.store, rank, size, opts.timeout), True
        rt = _RUNTIME
        if ranks != list(range(rt.n_pes)):
            return _sub_group(rt, opts, ranks)
        if rank != rt.pe or size != rt.n_pes:
            _fail(f"the group's rank {rank} of {size} is not the runtime's PE {rt.pe} of {rt.n_pes}")
        group = ProcessGroupTessera(rt, opts.store, opts.timeout)
        _GROUPS += 1
        if _POOL is None and SUBGROUP_SLOTS > 0 and rt.n_pes > 1:  # collective, as this group is
            workspace = -(-rt.team_workspace_size // 64) * 64
            slot = workspace + -(-SUBGROUP_STAGING_BYTES // 64) * 64
            pool = rt.empty((SUBGROUP_SLOTS * slot,), "uint8")
            _POOL = (group, pool, _torch.from_dlpack(pool), slot, workspace)
        return group


def _sub_group(rt, opts, ranks):
    """A group of some of the ranks: a Tessera team (members only) over the next pool slot."""
    if _POOL is None:
        _fail(f"a group of ranks {ranks}: make a \"tessera\" group of every rank first "
              "(init_process_group(\"tessera\")); its creation reserves the sub-groups' memory")
    stride = ranks[1] - ranks[0] if len(ranks) > 1 else 1
    if any(b - a != stride for a, b in zip(ranks, ranks[1:])) or stride < 1:
        _fail(f"a group of ranks {ranks} is not evenly spaced, and a Tessera team is strided "
              "(start, start + stride, ...); give it another backend (new_group(ranks, "
              "backend=\"gloo\"))")
    owner, _, pool, slot_bytes, workspace = _POOL
    store = opts.store
    if opts.group_rank == 0:  # the owner's store counts the slots every sub-group took
        store.set("tessera/slot", str(owner._store.add("tessera/subgroups", 1) - 1))
    slot = int(store.get("tessera/slot").decode())
    if slot >= SUBGROUP_SLOTS:
        _fail(f"a group of ranks {ranks} would be sub-group {slot + 1}, but the first group "
              f"reserved {SUBGROUP_SLOTS} (set TESSERA_DIST_SUBGROUPS before it is made)")
    base = slot * slot_bytes
    team = rt.team_over_block(ranks[0], stride, len(ranks), pool[base:base + workspace])
    group = ProcessGroupTessera(rt, store, opts.timeout, team=team,
                                staging=pool[base + workspace:base + slot_bytes])
    group._store_barrier("created")  # every member zeroed its workspace before any uses it
    return group


class _CompletedWork:
    """What a call returns inside the worker: its output tensors (the worker completes the
    caller's _Work with them)."""

    def __init__(self, result):
        self.result = result


def _done(result):
    return _CompletedWork(result)


class _Work(_dist.Work):
    """The Work of a call queued on the worker thread: wait() returns True once it ran (or raises
    what it raised), and the future completes with the call's output tensors then. (torch hands
    callers a holder of it that forwards only wait() and get_future(), so their is_completed()
    reads False: wait or use the future.)"""

    def __init__(self, bound: datetime.timedelta):
        super().__init__()
        self._bound = bound
        self._event = threading.Event()
        self._error = None
        self._result = None
        self._future = _torch.futures.Future()

    def _finish(self, fn):
        try:
            self._result = fn().result
        except BaseException as e:  # handed to whoever waits, on their thread
            self._error = e
            self._future.set_exception(e)
        else:
            self._future.set_result(self._result)  # (runs the future's callbacks here)
        self._event.set()  # last: a wait() that returns sees the future done

    def wait(self, timeout=None):
        bound = timeout if isinstance(timeout, datetime.timedelta) and timeout.total_seconds() > 0 else self._bound
        if not self._event.wait(bound.total_seconds()):
            raise _TimeoutError(f"tessera backend: a call did not complete within {bound.total_seconds():g} s")
        if self._error is not None:
            raise self._error
        return True

    def is_completed(self):
        return self._event.is_set()

    def is_success(self):
        return self._event.is_set() and self._error is None

    def exception(self):
        return self._error

    def result(self):
        return self._result

    def get_future(self):
        return self._future


class _Worker:
    """The one thread of this process that runs every group's asynchronous calls, in the order
    they were made: such a call returns its Work at once (async_op), and the program computes
    while it runs. A synchronous call runs on its caller's thread when nothing is queued (a hand
    off to the thread costs more than a small collective), else it queues behind the others."""

    def __init__(self):
        self._queue = queue.SimpleQueue()
        self._thread = None
        self._start = threading.Lock()
        self._running = threading.Lock()  # held by whichever thread runs a call
        self._pending = 0  # calls queued and not finished (under _start)
        self._local = threading.local()  # .inside: this thread is running a call

    def here(self) -> bool:
        """Whether this thread is running a call now (a call it makes runs in place)."""
        return getattr(self._local, "inside", False)

    def _finish(self, work, fn):
        self._local.inside = True
        try:
            work._finish(fn)
        finally:
            self._local.inside = False

    def submit(self, fn, bound: datetime.timedelta) -> _Work:
        with self._start:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._loop, name="tessera-c10d", daemon=True)
                self._thread.start()
            self._pending += 1
            work = _Work(bound)
            self._queue.put((work, fn))
        return work

    def run_now_or_queue(self, fn, bound: datetime.timedelta) -> _Work:
        """fn on this thread when nothing is queued, else queued; complete on return."""
        with self._running:
            with self._start:
                idle = self._pending == 0
            if idle:
                work = _Work(bound)
                self._finish(work, fn)
                return work
        work = self.submit(fn, bound)
        work.wait()
        return work

    def _loop(self):
        while True:
            work, fn = self._queue.get()
            if work is None:
                return
            with self._running:
                self._finish(work, fn)
            with self._start:
                self._pending -= 1

    def stop(self):
        with self._start:
            if self._thread is not None and self._thread.is_alive():
                self._queue.put((None, None))
                self._thread.join(timeout=5)
            self._thread = None


_WORKER = _Worker()


def _queued(method):
    """An asynchronous backend call (opts.asyncOp) queues on the worker thread and returns its
    Work at once; a synchronous one runs in place when nothing is queued; a call made by a call
    runs in place."""

    @functools.wraps(method)
    def call(self, *args):
        if _WORKER.here():
            return method(self, *args)
        bound = self._timeout * 2 + datetime.timedelta(seconds=10)  # the ops' own waits are bounded
        opts = args[-1] if args else None
        if getattr(opts, "asyncOp", True) is False or not hasattr(opts, "asyncOp"):
            # A synchronous call (and send/recv, which carry no options): in place when idle.
            return _WORKER.run_now_or_queue(lambda: method(self, *args), bound)
        return _WORKER.submit(lambda: method(self, *args), bound)

    return call


def _reduce_name(op, dtype) -> str:
    names = {_dist.ReduceOp.SUM: "sum", _dist.ReduceOp.AVG: "sum", _dist.ReduceOp.MAX: "max",
             _dist.ReduceOp.MIN: "min", _dist.ReduceOp.PRODUCT: "prod"}
    kind = op.op if hasattr(op, "op") else op  # AllreduceOptions hold a ReduceOp
    for k, v in names.items():
        if kind == k:
            if kind == _dist.ReduceOp.AVG and not dtype.is_floating_point:
                _fail(f"ReduceOp.AVG needs a floating-point tensor, got {dtype}")
            return v
    _fail(f"reduce op {kind} is not supported; use SUM, AVG, MAX, MIN (or PRODUCT on integers)")


def _is_avg(op) -> bool:
    kind = op.op if hasattr(op, "op") else op
    return kind == _dist.ReduceOp.AVG


def _copy(dst: _torch.Tensor, src: _torch.Tensor) -> None:
    """dst[:] = src (contiguous, same dtype and size) as one memcpy on this thread: torch's copy_
    splits a large copy over its intra-op threads, which then compete with the peers' processes
    spinning in their next call (on 2 cores a 1 MiB copy took 4.9 ms that way, 0.1 ms this way)."""
    _np.copyto(dst.detach().view(-1).view(_torch.uint8).numpy(), src.detach().view(-1).view(_torch.uint8).numpy())


def _check(t: _torch.Tensor, what: str) -> None:
    if t.device.type != "cpu":
        _fail(f"{what} is on {t.device}; this backend moves CPU tensors (give the device another "
              "backend: init_process_group(\"cpu:tessera,cuda:nccl\"))")
    if t.dtype not in _DTYPES:
        _fail(f"{what} has dtype {t.dtype}; supported: float32, bfloat16, float16, int32, int64")
    if not t.is_contiguous():
        _fail(f"{what} is not contiguous")


class ProcessGroupTessera(_C10dBackend):
    """The c10d backend object of one group over a tessera.Runtime: every rank (team None), or a
    sub-group (a Tessera team made by its members, staging a fixed slot of the pool)."""

    def __init__(self, rt, store, timeout: datetime.timedelta, team=None, staging=None):
        self._team = team
        self._rank, self._n = (rt.pe, rt.n_pes) if team is None else (team.my_rank, team.size)
        super().__init__(self._rank, self._n)
        self._rt = rt
        self._store = store  # the group's c10d store: the agreement checks go through it
        own = os.environ.get("TESSERA_TIMEOUT")
        self._timeout = datetime.timedelta(seconds=float(own)) if own and float(own) > 0 else timeout
        self._agreed = set()  # call signatures every rank has been checked to make alike
        self._checks = 0
        self._barriers = 0
        # A uint8 heap array grown collectively (every rank), or a sub-group's fixed slot view.
        self._staging, self._staging_view = None, staging
        self._p2p = self._mail = None
        self._pool = _POOL  # a sub-group's slot lives as long as this reservation
        if team is None:
            n = rt.n_pes  # the send/recv buffers: every member makes the group together
            self._p2p = (rt.zeros((n, P2P_SLOT_BYTES), "uint8"), rt.zeros((n,), "uint64"),
                         rt.zeros((n,), "uint64"), rt.zeros((n, 2), "uint64"))
            # Their NumPy views (slots, ready, credit, header), made once: send/recv index them.
            self._mail = tuple(_np.from_dlpack(a) for a in self._p2p)
        self._sent = [0] * rt.n_pes  # messages chunks sent to / received from each PE
        self._received = [0] * rt.n_pes
        self._closed = False
        _LIVE.add(self)

    def getBackendName(self) -> str:
        return BACKEND_NAME

    # What torch asks a backend it may do. Defined here: torch 2.15 reads these of a Python
    # backend through getattr, which without a Python definition re-enters its own C++ property.
    supports_coalescing = property(lambda self: False)
    supports_splitting = property(lambda self: False)
    supports_shrinking = property(lambda self: False)
    supports_reconfigure = property(lambda self: False)
    supports_window = property(lambda self: False)
    _supports_time_estimate = property(lambda self: False)

    # ---- staging ----------------------------------------------------------------------------
    def _buffer(self, count: int, dtype) -> _torch.Tensor:
        """A heap tensor of `count` elements at the same offset on every member: the group's
        buffer, grown collectively (every rank makes the same calls in the same order, as c10d
        requires); a sub-group's is its fixed slot, which _piece keeps calls within."""
        nbytes = max(64, count * dtype.itemsize)
        if self._team is None and (self._staging is None or self._staging.nbytes < nbytes):
            if self._staging is not None:
                self._staging.free()
            self._staging = None
            self._staging = self._rt.empty((1 << (nbytes - 1).bit_length(),), "uint8")
            self._staging_view = _torch.from_dlpack(self._staging)
        return self._staging_view[:nbytes].view(dtype)[:count]

    def _piece(self, count: int, dtype, blocks: int = 1) -> int:
        """How many of `count` elements (per block, `blocks` blocks staged together) one call
        moves: all of them, but on a sub-group what its slot holds."""
        if self._team is None:
            return max(1, count)
        return max(1, min(count, self._staging_view.numel() // (blocks * dtype.itemsize)))

    def _store_barrier(self, what: str) -> None:
        """Every member has got here (through the group's store), within the timeout."""
        seq, self._barriers = self._barriers, self._barriers + 1
        keys = [f"tessera/{what}/{seq}/{r}" for r in range(self._n)]
        self._store.set(keys[self._rank], "1")
        try:
            self._store.wait(keys, self._timeout)
        except RuntimeError as e:
            raise _TimeoutError(f"tessera backend: rank {self._rank} waited for the group's "
                                f"{what} {self._timeout.total_seconds():g} s ({e})") from None

    def _agree(self, call: str) -> None:
        """The first time this rank makes `call` (an op, its sizes, dtype and options), checks
        through the store that every rank makes the same call, so that sizes differing across
        ranks raise on every rank (naming each rank's call) instead of waiting for each other."""
        if call in self._agreed:
            return
        self._agreed.add(call)  # checked even when the check fails, as the ops record theirs
        seq, self._checks = self._checks, self._checks + 1
        keys = [f"tessera/agree/{seq}/{r}" for r in range(self._n)]
        self._store.set(keys[self._rank], call)
        try:
            self._store.wait(keys, self._timeout)
        except RuntimeError as e:  # a rank did not make a call to compare within the timeout
            raise _TimeoutError(f"tessera backend: rank {self._rank} made {call}, and not every "
                                f"rank made a call within {self._timeout.total_seconds():g} s "
                                f"({e})") from None
        calls = [self._store.get(k).decode() for k in keys]
        if any(c != call for c in calls):
            _fail("the ranks made different calls: " +
                  "; ".join(f"rank {r} {c}" for r, c in enumerate(calls)))

    def _run(self, fn):
        with _LOCK:
            if self._closed:
                raise RuntimeError("tessera backend: the process group was destroyed")
            if self._team is not None and (_POOL is not self._pool or not self._rt.valid):
                raise RuntimeError("tessera backend: this sub-group's memory went with the group of "
                                   "every rank that reserved it, which was destroyed")
            fn()
            self._rt.synchronize()

    # ---- collectives ------------------------------------------------------------------------
    @_queued
    def allreduce(self, tensors, opts):
        for t in tensors:
            _check(t, "allreduce's tensor")
            op = _reduce_name(opts.reduceOp, t.dtype)
            self._agree(f"all_reduce({t.numel()} x {t.dtype}, {op})")
            flat = t.view(-1)
            step = self._piece(flat.numel(), t.dtype)
            for lo in range(0, flat.numel(), step):
                part = flat[lo:lo + step]
                recv = self._buffer(part.numel(), t.dtype)
                self._run(lambda: _ops.all_reduce(self._rt, part, recv, op=op, team=self._team))
                _copy(part, recv)
            if _is_avg(opts.reduceOp):
                t.div_(self._n)
        return _done(tensors)

    @_queued
    def allreduce_coalesced(self, tensors, opts):
        return self.allreduce(tensors, opts)

    @_queued
    def _allgather_base(self, output, input, opts):
        _check(input, "all_gather's input")
        _check(output, "all_gather's output")
        n = self._n
        if output.numel() != n * input.numel() or output.dtype != input.dtype:
            _fail(f"all_gather_into_tensor: output has {output.numel()} {output.dtype} elements, "
                  f"expected {n} x {input.numel()} {input.dtype}")
        self._agree(f"all_gather({input.numel()} x {input.dtype})")
        if input.numel() == 0:
            return _done([output])
        if self._team is None:
            recv = self._buffer(output.numel(), input.dtype)
            self._run(lambda: _ops.all_gather(self._rt, input.view(-1), recv.view(n, -1)))
            _copy(output, recv)
            return _done([output])
        # On a team: an all-to-all of n copies of the input (all_gather has no team).
        flat, out = input.view(-1), output.view(n, -1)
        step = self._piece(flat.numel(), input.dtype, n)
        for lo in range(0, flat.numel(), step):
            send = flat[lo:lo + step].repeat(n)
            recv = self._buffer(send.numel(), input.dtype)
            self._run(lambda: _ops.all_to_all(self._rt, send, recv, team=self._team))
            out[:, lo:lo + step].copy_(recv.view(n, -1))
        return _done([output])

    @_queued
    def allgather(self, output_tensors, input_tensors, opts):
        for outs, t in zip(output_tensors, input_tensors):
            if len(outs) != self._n or any(o.shape != t.shape for o in outs):
                _fail(f"all_gather: expected {self._n} output tensors of shape {tuple(t.shape)}")
            _check(t, "all_gather's input")
            gathered = _torch.empty((self._n, *t.shape), dtype=t.dtype)
            self._allgather_base(gathered, t, opts)
            for o, g in zip(outs, gathered):
                o.copy_(g)
        return _done(output_tensors)

    @_queued
    def _reduce_scatter_base(self, output, input, opts):
        _check(input, "reduce_scatter's input")
        _check(output, "reduce_scatter's output")
        n = self._n
        if input.numel() != n * output.numel() or output.dtype != input.dtype:
            _fail(f"reduce_scatter_tensor: input has {input.numel()} {input.dtype} elements, "
                  f"expected {n} x {output.numel()} {output.dtype}")
        op = _reduce_name(opts.reduceOp, input.dtype)
        self._agree(f"reduce_scatter({output.numel()} x {input.dtype} per rank, {op})")
        if output.numel() == 0:
            return _done([output])
        blocks, out = input.view(n, -1), output.view(-1)
        step = self._piece(out.numel(), input.dtype)
        for lo in range(0, out.numel(), step):
            send = input.view(-1) if step >= out.numel() else blocks[:, lo:lo + step].contiguous().view(-1)
            recv = self._buffer(send.numel() // n, input.dtype)
            self._run(lambda: _ops.reduce_scatter(self._rt, send, recv, op=op, team=self._team))
            _copy(out[lo:lo + recv.numel()], recv)
        if _is_avg(opts.reduceOp):
            output.div_(n)
        return _done([output])

    @_queued
    def reduce_scatter(self, output_tensors, input_tensors, opts):
        for out, ins in zip(output_tensors, input_tensors):
            if len(ins) != self._n or any(i.shape != out.shape for i in ins):
                _fail(f"reduce_scatter: expected {self._n} input tensors of shape {tuple(out.shape)}")
            self._reduce_scatter_base(out, _torch.cat([i.reshape(-1) for i in ins]), opts)
        return _done(output_tensors)

    @_queued
    def broadcast(self, tensors, opts):
        root = opts.rootRank
        for t in tensors:
            _check(t, "broadcast's tensor")
            self._agree(f"broadcast({t.numel()} x {t.dtype}, root {root})")
            flat = t.view(-1)
            step = self._piece(flat.numel(), t.dtype)
            for lo in range(0, flat.numel(), step):
                part = flat[lo:lo + step]
                recv = self._buffer(part.numel(), t.dtype)
                send = part if self._rank == root else None
                self._run(lambda: _ops.broadcast(self._rt, send, recv, root=root, team=self._team))
                if self._rank != root:
                    _copy(part, recv)
        return _done(tensors)

    @_queued
    def alltoall_base(self, output, input, output_split_sizes, input_split_sizes, opts):
        _check(input, "all_to_all's input")
        _check(output, "all_to_all's output")
        n = self._n
        if output.dtype != input.dtype:
            _fail(f"all_to_all_single: output is {output.dtype}, input {input.dtype}")
        if not output_split_sizes and not input_split_sizes:
            if input.numel() % n or output.numel() != input.numel():
                _fail(f"all_to_all_single: input ({input.numel()} elements) and output "
                      f"({output.numel()}) must be the same size, {n} equal blocks")
            self._agree(f"all_to_all({input.numel()} x {input.dtype})")
            if input.numel() == 0:
                return _done([output])
            block = input.numel() // n
            ins, outs = input.view(n, block), output.view(n, block)
            step = self._piece(block, input.dtype, n)
            for lo in range(0, block, step):
                send = input.view(-1) if step >= block else ins[:, lo:lo + step].contiguous().view(-1)
                recv = self._buffer(send.numel(), input.dtype)
                self._run(lambda: _ops.all_to_all(self._rt, send, recv, team=self._team))
                if step >= block:
                    _copy(output, recv)
                else:
                    outs[:, lo:lo + step].copy_(recv.view(n, -1))
            return _done([output])
        row_in = input[0].numel() if input.dim() > 0 and input.shape[0] else 1
        row_out = output[0].numel() if output.dim() > 0 and output.shape[0] else 1
        send_rows = list(input_split_sizes) or [input.shape[0] // n] * n
        recv_rows = list(output_split_sizes) or [output.shape[0] // n] * n
        if len(send_rows) != n or len(recv_rows) != n or sum(send_rows) != input.shape[0] \
                or sum(recv_rows) != output.shape[0]:
            _fail(f"all_to_all_single: split sizes {send_rows} / {recv_rows} do not fit "
                  f"{n} ranks and the tensors' {input.shape[0]} / {output.shape[0]} rows")
        self._agree(f"all_to_all_v({input.dtype})")  # the counts differ from rank to rank
        if self._team is not None and output.numel() * output.element_size() > self._staging_view.numel():
            _fail(f"all_to_all_single with split sizes on a sub-group: rank {self._rank} receives "
                  f"{output.numel() * output.element_size()} bytes, more than the sub-group's "
                  f"{self._staging_view.numel()}-byte staging (TESSERA_DIST_SUBGROUP_STAGING)")
        send_counts = _torch.tensor([r * row_in for r in send_rows], dtype=_torch.int64)
        recv_counts = _torch.zeros(n, dtype=_torch.int64)
        recv_offsets = _torch.zeros(n, dtype=_torch.int64)
        recv = self._buffer(output.numel(), input.dtype)
        # A rank that sends nothing still passes memory (the op refuses a null send).
        send = input.view(-1) if input.numel() else _torch.empty(1, dtype=input.dtype)
        self._run(lambda: _ops.all_to_all_v(self._rt, send, send_counts, recv, recv_counts,
                                            recv_offsets, team=self._team))
        expected = [r * row_out for r in recv_rows]
        if recv_counts.tolist() != expected:
            _fail(f"all_to_all_single: rank {self._rank} expected {expected} elements from the "
                  f"ranks (output_split_sizes), they sent {recv_counts.tolist()}")
        _copy(output, recv)
        return _done([output])

    @_queued
    def alltoall(self, output_tensors, input_tensors, opts):
        n = self._n
        if len(output_tensors) != n or len(input_tensors) != n:
            _fail(f"all_to_all: expected {n} input and {n} output tensors")
        for t in (*output_tensors, *input_tensors):
            _check(t, "all_to_all's tensor")
        send = _torch.cat([t.reshape(-1) for t in input_tensors])
        out = _torch.empty(sum(t.numel() for t in output_tensors), dtype=send.dtype)
        self.alltoall_base(out, send, [t.numel() for t in output_tensors],
                           [t.numel() for t in input_tensors], opts)
        for t, part in zip(output_tensors, out.split([t.numel() for t in output_tensors])):
            t.view(-1).copy_(part)
        return _done(output_tensors)

    # ---- rooted calls, through the ones above ---------------------------------------------
    @_queued
    def reduce(self, tensors, opts):
        root = opts.rootRank
        for t in tensors:
            _check(t, "reduce's tensor")
            self._agree(f"reduce({t.numel()} x {t.dtype}, root {root})")
            # Every rank reduces; only the root keeps the result (the others' tensors stay).
            target = t if self._rank == root else t.clone()
            all_opts = _dist.AllreduceOptions()
            all_opts.reduceOp = opts.reduceOp
            self.allreduce([target], all_opts)
        return _done(tensors)

    def _root_list(self, call: str, role: str, t: _torch.Tensor, lists, i: int, root: int):
        """Checks `t` (the rank's `role` tensor of a rooted `call`) and agrees on the call with
        every rank. The root's lists[i] must be one tensor per rank of t's shape and dtype
        (the other role); returns it at the root (or fails), None elsewhere."""
        _check(t, f"{call}'s {role}")
        self._agree(f"{call}({t.numel()} x {t.dtype}, root {root})")
        if self._rank != root:
            return None
        per_rank = lists[i] if i < len(lists) else []
        if len(per_rank) != self._n or any(p.shape != t.shape or p.dtype != t.dtype for p in per_rank):
            other = "output" if role == "input" else "input"
            _fail(f"{call}: the root needs {self._n} {other} tensors of shape {tuple(t.shape)} {t.dtype}")
        return per_rank

    @_queued
    def gather(self, output_tensors, input_tensors, opts):
        root, n = opts.rootRank, self._n
        for i, t in enumerate(input_tensors):
            outs = self._root_list("gather", "input", t, output_tensors, i, root)
            gathered = _torch.empty((n, *t.shape), dtype=t.dtype)
            self._allgather_base(gathered, t, opts)
            if outs is not None:
                for o, g in zip(outs, gathered):
                    o.copy_(g)
        return _done(output_tensors)

    @_queued
    def scatter(self, output_tensors, input_tensors, opts):
        root, n = opts.rootRank, self._n
        for i, t in enumerate(output_tensors):
            parts = self._root_list("scatter", "output", t, input_tensors, i, root)
            if parts is not None:
                send = _torch.cat([p.reshape(-1) for p in parts])
                sends = [t.numel()] * n
            else:
                send, sends = t.new_empty((0,)), [0] * n
            recvs = [t.numel() if r == root else 0 for r in range(n)]
            out = t.view(-1)  # the root's block for each rank, as an all-to-all with split sizes
            self.alltoall_base(out, send, recvs, sends, opts)
        return _done(output_tensors)

    # The names torch.distributed calls them by now (the ones above are the older names).
    @_queued
    def all_gather_single(self, output, input, opts):
        return self._allgather_base(output, input, opts)

    @_queued
    def reduce_scatter_single(self, output, input, opts):
        return self._reduce_scatter_base(output, input, opts)

    @_queued
    def all_to_all_single(self, output, input, output_split_sizes, input_split_sizes, opts):
        return self.alltoall_base(output, input, output_split_sizes, input_split_sizes, opts)

    @_queued
    def barrier(self, opts=None):
        if self._team is None:
            with _LOCK:
                self._rt.barrier()
        else:  # a one-element all-reduce on the team: no member returns before all arrived
            one = _torch.ones(1, dtype=_torch.int32)
            recv = self._buffer(1, _torch.int32)
            self._run(lambda: _ops.all_reduce(self._rt, one, recv, team=self._team))
        return _done([])

    # ---- point to point ----------------------------------------------------------------------
    # PE d's heap holds, for each sender s, a slot of P2P_SLOT_BYTES, a header (the message's
    # bytes) and the word ready[s] (how many chunks s has put there); PE s's heap holds credit[d]
    # (how many chunks d has taken out of its slot for s). A sender puts a chunk once the
    # receiver has taken the previous one, then raises ready; the receiver copies it out and
    # raises the sender's credit. Messages between a pair arrive in the order they were sent,
    # whatever their tags; a message of up to one slot is buffered (send returns before recv).
    @staticmethod
    def _chunks(t: _torch.Tensor, what: str):
        """t's bytes in slot-sized pieces (one empty piece for an empty tensor): (index, piece)."""
        _check(t, what)
        data = t.view(-1).view(_torch.uint8)
        for c in range(max(1, -(-data.numel() // P2P_SLOT_BYTES))):
            yield c, data[c * P2P_SLOT_BYTES:(c + 1) * P2P_SLOT_BYTES]

    def _world_peer(self, r: int, what: str):
        """A sub-group's p2p goes through the mailboxes of the group of every rank that reserved
        its slot: (that group, r's world rank)."""
        if self._pool is None or _POOL is not self._pool:
            raise RuntimeError("tessera backend: this sub-group's memory went with the group of "
                               "every rank that reserved it, which was destroyed")
        if not 0 <= r < self._n:
            _fail(f"{what}: rank {r} is not in this group of {self._n}")
        return self._pool[0], self._team.pe(r)

    @_queued
    def send(self, tensors, dst, tag):
        if self._team is not None:
            world, peer = self._world_peer(dst, "send")
            return world.send(tensors, peer, tag)
        slots, ready, credit, header = self._mail
        me = self._rt.pe
        with _LOCK:
            for t in tensors:
                nbytes = t.numel() * t.element_size()
                for c, part in self._chunks(t, "send's tensor"):
                    # Wait until dst took every chunk sent before this one out of its slot.
                    self._rt.wait_until(credit[dst:dst + 1], ">=", self._sent[dst])
                    self._rt.put(header[me], _np.array([nbytes, c], dtype=_np.uint64), dst)
                    if part.numel():
                        self._rt.put(slots[me, :part.numel()], part.numpy(), dst)
                    self._sent[dst] += 1
                    self._rt.signal(ready[me:me + 1], self._sent[dst], dst)
        return _done(tensors)

    @_queued
    def recv(self, tensors, src, tag):
        if self._team is not None:
            world, peer = self._world_peer(src, "recv")
            return world.recv(tensors, peer, tag)
        slots, ready, credit, header = self._mail
        me = self._rt.pe
        with _LOCK:
            for t in tensors:
                nbytes = t.numel() * t.element_size()
                for c, part in self._chunks(t, "recv's tensor"):
                    self._rt.wait_until(ready[src:src + 1], ">=", self._received[src] + 1)
                    if int(header[src, 0]) != nbytes:
                        _fail(f"recv from rank {src}: the message has {int(header[src, 0])} bytes, the "
                              f"tensor {nbytes} ({tuple(t.shape)} {t.dtype})")
                    if part.numel():
                        _copy(part, _torch.from_numpy(slots[src, :part.numel()]))
                    self._received[src] += 1
                    self._rt.signal(credit[me:me + 1], self._received[src], src)
        return _done(tensors)

    def recv_anysource(self, tensors, tag):
        _fail("recv from any source is not supported; name the source rank")

    # ---- teardown ----------------------------------------------------------------------------
    def shutdown(self):
        """After the calls queued before it (destroy_process_group waits for it)."""
        if _WORKER.here():
            self._close()
        else:
            _WORKER.run_now_or_queue(lambda: (self._close(), _done([]))[1], self._timeout * 2).wait()

    def _close(self):
        global _RUNTIME, _GROUPS, _OWNED, _POOL
        with _LOCK:
            if self._closed:
                return
            self._closed = True
            rt, self._rt = self._rt, None
            if self._team is not None:  # a sub-group: its slot stays reserved, nothing to free
                self._staging_view = self._pool = None
                return
            _GROUPS -= 1
            if rt.valid:  # (a runtime given by set_runtime may have been finalized already)
                owned_pool = _POOL is not None and _POOL[0] is self
                for a in (self._staging, *(self._p2p or ()), _POOL[1] if owned_pool else None):
                    if a is not None:
                        a.free()  # collective: every rank destroys the group
                if owned_pool:
                    _POOL = None
            self._staging = self._staging_view = self._p2p = self._mail = None
            if _GROUPS == 0 and _OWNED and _RUNTIME is rt:
                rt.finalize()
                _RUNTIME, _OWNED = None, False


_LIVE = weakref.WeakSet()  # the groups not yet destroyed


@atexit.register
def _drop_at_exit() -> None:
    """A program that never called destroy_process_group: the groups, which torch keeps until
    after the interpreter has gone, let go of the runtime and its arrays while Python still runs
    (the runtime then ends as an unfinalized one does)."""
    global _RUNTIME, _OWNED, _POOL
    _WORKER.stop()  # after the call it runs, if any
    for group in list(_LIVE):
        group._closed = True
        group._rt = group._staging = group._staging_view = group._p2p = group._mail = None
        group._pool = group._team = None
    _RUNTIME, _OWNED, _POOL = None, False, None


_dist.Backend.register_backend(BACKEND_NAME, _create, extended_api=True, devices=["cpu"])
