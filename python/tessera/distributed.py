"""tessera.distributed: Tessera as a ``torch.distributed`` backend, for CPU tensors.

    import tessera.distributed                 # registers the backend "tessera" for device cpu
    dist.init_process_group("tessera")         # or "cpu:tessera,cuda:nccl"
    model = DistributedDataParallel(model)     # DDP, FSDP2 and the c10d calls run unchanged

Each process is one PE. The backend starts its own runtime from the process group's store (rank
0 publishes a bootstrap id through it), so any ``init_method`` works; ``set_runtime(rt)`` before
``init_process_group`` shares a runtime the program made itself (``tessera.init()``), and
``runtime()`` returns the one in use, for tessera.torch's fused ops beside the c10d calls.

Ordinary tensors are staged through symmetric heap buffers the backend owns (grown collectively,
freed when the group is destroyed). Every call completes before it returns; its ``Work`` is
already complete and its future holds the output tensors. Groups are the whole world (any
``new_group`` of every rank); a group of fewer ranks raises ``ValueError`` on its members.
See docs/python.md, "torch.distributed backend".
"""

from __future__ import annotations

import atexit
import datetime
import os
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
    """The creator init_process_group / new_group call (extended API) on each member."""
    global _RUNTIME, _OWNED, _GROUPS
    rank, size = opts.group_rank, opts.group_size
    ranks = list(opts.global_ranks_in_group) or list(range(size))
    with _LOCK:
        if _RUNTIME is None or not _RUNTIME.valid:
            if ranks != list(range(size)):
                _fail("the first group must be the whole world")
            _RUNTIME, _OWNED = _start_runtime(opts.store, rank, size, opts.timeout), True
        rt = _RUNTIME
        if ranks != list(range(rt.n_pes)):
            _fail(f"a group of ranks {ranks} is not the whole world ({rt.n_pes} ranks): groups of "
                  "fewer ranks are not supported yet; give them another backend "
                  "(new_group(ranks, backend=\"gloo\"))")
        if rank != rt.pe or size != rt.n_pes:
            _fail(f"the group's rank {rank} of {size} is not the runtime's PE {rt.pe} of {rt.n_pes}")
        group = ProcessGroupTessera(rt, opts.store, opts.timeout)
        _GROUPS += 1
        return group


class _CompletedWork(_dist.Work):
    """The Work of a call that completed before it returned: wait() returns True at once, and the
    future holds the call's output tensors. (torch hands callers a holder of it that forwards
    only wait() and get_future(), so their is_completed() reads False: wait or use the future.)"""

    def __init__(self, result):
        super().__init__()
        self._result = result
        self._future = _torch.futures.Future()
        self._future.set_result(result)

    def wait(self, timeout=None):
        return True

    def is_completed(self):
        return True

    def is_success(self):
        return True

    def exception(self):
        return None

    def result(self):
        return self._result

    def get_future(self):
        return self._future


def _done(result):
    return _CompletedWork(result)


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
    """The c10d backend object of one group (the whole world) over a tessera.Runtime."""

    def __init__(self, rt, store, timeout: datetime.timedelta):
        super().__init__(rt.pe, rt.n_pes)
        self._rt = rt
        self._store = store  # the group's c10d store: the agreement checks go through it
        own = os.environ.get("TESSERA_TIMEOUT")
        self._timeout = datetime.timedelta(seconds=float(own)) if own and float(own) > 0 else timeout
        self._agreed = set()  # call signatures every rank has been checked to make alike
        self._checks = 0
        self._staging = self._staging_view = None  # a uint8 heap array (grown collectively)
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
        """A heap tensor of `count` elements (collective when it grows: every rank makes the same
        calls in the same order, as c10d requires)."""
        nbytes = max(64, count * dtype.itemsize)
        if self._staging is None or self._staging.nbytes < nbytes:
            if self._staging is not None:
                self._staging.free()
            self._staging = None
            self._staging = self._rt.empty((1 << (nbytes - 1).bit_length(),), "uint8")
            self._staging_view = _torch.from_dlpack(self._staging)
        return self._staging_view[:nbytes].view(dtype)[:count]

    def _agree(self, call: str) -> None:
        """The first time this rank makes `call` (an op, its sizes, dtype and options), checks
        through the store that every rank makes the same call, so that sizes differing across
        ranks raise on every rank (naming each rank's call) instead of waiting for each other."""
        if call in self._agreed:
            return
        self._agreed.add(call)  # checked even when the check fails, as the ops record theirs
        seq, self._checks = self._checks, self._checks + 1
        keys = [f"tessera/agree/{seq}/{r}" for r in range(self._rt.n_pes)]
        self._store.set(keys[self._rt.pe], call)
        try:
            self._store.wait(keys, self._timeout)
        except RuntimeError as e:  # a rank did not make a call to compare within the timeout
            raise _TimeoutError(f"tessera backend: rank {self._rt.pe} made {call}, and not every "
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
            fn()
            self._rt.synchronize()

    # ---- collectives ------------------------------------------------------------------------
    def allreduce(self, tensors, opts):
        for t in tensors:
            _check(t, "allreduce's tensor")
            op = _reduce_name(opts.reduceOp, t.dtype)
            self._agree(f"all_reduce({t.numel()} x {t.dtype}, {op})")
            if t.numel() == 0:
                continue
            recv = self._buffer(t.numel(), t.dtype)
            self._run(lambda: _ops.all_reduce(self._rt, t.view(-1), recv, op=op))
            _copy(t, recv)
            if _is_avg(opts.reduceOp):
                t.div_(self._rt.n_pes)
        return _done(tensors)

    def allreduce_coalesced(self, tensors, opts):
        return self.allreduce(tensors, opts)

    def _allgather_base(self, output, input, opts):
        _check(input, "all_gather's input")
        _check(output, "all_gather's output")
        n = self._rt.n_pes
        if output.numel() != n * input.numel() or output.dtype != input.dtype:
            _fail(f"all_gather_into_tensor: output has {output.numel()} {output.dtype} elements, "
                  f"expected {n} x {input.numel()} {input.dtype}")
        self._agree(f"all_gather({input.numel()} x {input.dtype})")
        if input.numel() == 0:
            return _done([output])
        recv = self._buffer(output.numel(), input.dtype)
        self._run(lambda: _ops.all_gather(self._rt, input.view(-1), recv.view(n, -1)))
        _copy(output, recv)
        return _done([output])

    def allgather(self, output_tensors, input_tensors, opts):
        for outs, t in zip(output_tensors, input_tensors):
            if len(outs) != self._rt.n_pes or any(o.shape != t.shape for o in outs):
                _fail(f"all_gather: expected {self._rt.n_pes} output tensors of shape {tuple(t.shape)}")
            _check(t, "all_gather's input")
            gathered = _torch.empty((self._rt.n_pes, *t.shape), dtype=t.dtype)
            self._allgather_base(gathered, t, opts)
            for o, g in zip(outs, gathered):
                o.copy_(g)
        return _done(output_tensors)

    def _reduce_scatter_base(self, output, input, opts):
        _check(input, "reduce_scatter's input")
        _check(output, "reduce_scatter's output")
        n = self._rt.n_pes
        if input.numel() != n * output.numel() or output.dtype != input.dtype:
            _fail(f"reduce_scatter_tensor: input has {input.numel()} {input.dtype} elements, "
                  f"expected {n} x {output.numel()} {output.dtype}")
        op = _reduce_name(opts.reduceOp, input.dtype)
        self._agree(f"reduce_scatter({output.numel()} x {input.dtype} per rank, {op})")
        if output.numel() == 0:
            return _done([output])
        recv = self._buffer(output.numel(), input.dtype)
        self._run(lambda: _ops.reduce_scatter(self._rt, input.view(-1), recv, op=op))
        _copy(output, recv)
        if _is_avg(opts.reduceOp):
            output.div_(n)
        return _done([output])

    def reduce_scatter(self, output_tensors, input_tensors, opts):
        for out, ins in zip(output_tensors, input_tensors):
            if len(ins) != self._rt.n_pes or any(i.shape != out.shape for i in ins):
                _fail(f"reduce_scatter: expected {self._rt.n_pes} input tensors of shape {tuple(out.shape)}")
            self._reduce_scatter_base(out, _torch.cat([i.reshape(-1) for i in ins]), opts)
        return _done(output_tensors)

    def broadcast(self, tensors, opts):
        root = opts.rootRank
        for t in tensors:
            _check(t, "broadcast's tensor")
            self._agree(f"broadcast({t.numel()} x {t.dtype}, root {root})")
            if t.numel() == 0:
                continue
            recv = self._buffer(t.numel(), t.dtype)
            send = t.view(-1) if self._rt.pe == root else None
            self._run(lambda: _ops.broadcast(self._rt, send, recv, root=root))
            if self._rt.pe != root:
                _copy(t, recv)
        return _done(tensors)

    def alltoall_base(self, output, input, output_split_sizes, input_split_sizes, opts):
        _check(input, "all_to_all's input")
        _check(output, "all_to_all's output")
        n = self._rt.n_pes
        if output.dtype != input.dtype:
            _fail(f"all_to_all_single: output is {output.dtype}, input {input.dtype}")
        if not output_split_sizes and not input_split_sizes:
            if input.numel() % n or output.numel() != input.numel():
                _fail(f"all_to_all_single: input ({input.numel()} elements) and output "
                      f"({output.numel()}) must be the same size, {n} equal blocks")
            self._agree(f"all_to_all({input.numel()} x {input.dtype})")
            if input.numel() == 0:
                return _done([output])
            recv = self._buffer(output.numel(), input.dtype)
            self._run(lambda: _ops.all_to_all(self._rt, input.view(-1), recv))
            _copy(output, recv)
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
        send_counts = _torch.tensor([r * row_in for r in send_rows], dtype=_torch.int64)
        recv_counts = _torch.zeros(n, dtype=_torch.int64)
        recv_offsets = _torch.zeros(n, dtype=_torch.int64)
        recv = self._buffer(output.numel(), input.dtype)
        self._run(lambda: _ops.all_to_all_v(self._rt, input.view(-1), send_counts, recv, recv_counts,
                                            recv_offsets))
        expected = [r * row_out for r in recv_rows]
        if recv_counts.tolist() != expected:
            _fail(f"all_to_all_single: rank {self._rt.pe} expected {expected} elements from the "
                  f"ranks (output_split_sizes), they sent {recv_counts.tolist()}")
        _copy(output, recv)
        return _done([output])

    def alltoall(self, output_tensors, input_tensors, opts):
        n = self._rt.n_pes
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

    # The names torch.distributed calls them by now (the ones above are the older names).
    def all_gather_single(self, output, input, opts):
        return self._allgather_base(output, input, opts)

    def reduce_scatter_single(self, output, input, opts):
        return self._reduce_scatter_base(output, input, opts)

    def all_to_all_single(self, output, input, output_split_sizes, input_split_sizes, opts):
        return self.alltoall_base(output, input, output_split_sizes, input_split_sizes, opts)

    def barrier(self, opts=None):
        with _LOCK:
            self._rt.barrier()
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

    def send(self, tensors, dst, tag):
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

    def recv(self, tensors, src, tag):
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
        self._close()

    def _close(self):
        global _RUNTIME, _GROUPS, _OWNED
        with _LOCK:
            if self._closed:
                return
            self._closed = True
            rt, self._rt = self._rt, None
            _GROUPS -= 1
            if rt.valid:  # (a runtime given by set_runtime may have been finalized already)
                for a in (self._staging, *(self._p2p or ())):
                    if a is not None:
                        a.free()  # collective: every rank destroys the group
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
    global _RUNTIME, _OWNED
    for group in list(_LIVE):
        group._closed = True
        group._rt = group._staging = group._staging_view = group._p2p = group._mail = None
    _RUNTIME, _OWNED = None, False


_dist.Backend.register_backend(BACKEND_NAME, _create, extended_api=True, devices=["cpu"])
