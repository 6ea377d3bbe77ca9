"""Synchronisation across PEs: signal, put_signal, the waits (wait_until, wait_until_some), the
tests that do not wait (test, test_any, test_some, test_all) and the device barriers (the whole
job's, a team's).

Signals are uint64 words in the heap. A signal is a release at system scope: a PE that
acquires the new value (wait_until) sees everything this program wrote before it. Waits are
bounded by the context's timeout (TESSERA_TIMEOUT): on expiry the wait records the failure
(PE, heap offset, comparison, value seen) and raises the job's abort, like the C++ device API,
and the host reports it at tessera.triton.check(rt). Every 256 turns a wait also watches the
abort word: when another PE failed or died it records peer_lost and gives up.

Every wait and test is called by the whole program (all its threads, like a C++ call with group
Block): it reads with acquire and ends with a barrier of the program's threads, so every thread
reads after the acquire.

Under Triton's interpreter the programs of one launch run one after another: a program must
not wait for a later program of the same launch (it would wait until the timeout)."""

import triton
import triton.language as tl

from . import _layout as L
from . import _proxy
from ._checks import active_mask, and_mask, route
from ._clock import now_ns, spin_pause
from ._context import control_wire_word, control_word
from ._failure import aborting, fail, record
from .rma import quiet

# What test_any returns when no signal holds (C++ std::size_t(-1), as an int32).
NPOS = tl.constexpr(-1)


@triton.jit
def _holds(seen, cmp: tl.constexpr, value):
    if cmp == L.EQ:
        r = seen == value
    elif cmp == L.NE:
        r = seen != value
    elif cmp == L.GT:
        r = seen > value
    elif cmp == L.GE:
        r = seen >= value
    elif cmp == L.LT:
        r = seen < value
    else:
        tl.static_assert(cmp == L.LE, "cmp is one of tx.EQ, NE, GT, GE, LT, LE")
        r = seen <= value
    return r


# _wait_ends: the wait gives up (the job is aborting), or ran past the timeout.
_ABORTING: tl.constexpr = tl.constexpr(1)
_TIMED_OUT: tl.constexpr = tl.constexpr(2)


@triton.jit
def _wait_ends(ctx, turns, start_ns, timeout_ns, OP: tl.constexpr):
    """The one bound of every wait here, checked every 256th turn: _ABORTING when the job is
    aborting (aborting() records why), _TIMED_OUT past the context's timeout (the caller reads
    once more and records the timeout if the condition still fails), else 0 (go on)."""
    end = tl.cast(0, tl.int32)
    if (turns & 255) == 0:
        if aborting(ctx, OP) != 0:
            end = _ABORTING
        elif timeout_ns != 0 and now_ns() - start_ns > timeout_ns:
            end = _TIMED_OUT
    return end


@triton.jit
def _route_signal(sig, value, op: tl.constexpr, pe, ctx, OP: tl.constexpr):
    """The signal word `sig` of `pe` routed for call OP (route's remote, direct, proxy) and
    `value` in its type, for the update op (tx.SET or tx.ADD)."""
    tl.static_assert(op == L.SET or op == L.ADD, "op is tx.SET or tx.ADD")
    remote, direct, proxy = route(sig, pe, ctx, None, OP, L.ROLE_SIGNAL, True)
    return remote, direct, proxy, tl.cast(value, sig.dtype.element_ty)


@triton.jit
def signal(sig, value, op: tl.constexpr, pe, ctx):
    """Sets (op tx.SET) or adds `value` to (tx.ADD) the uint64 signal `sig` on `pe`, with
    release at system scope: after acquiring it, `pe` sees everything this program wrote
    before (its puts, stores, atomics, on any PE)."""
    tl.debug_barrier()
    remote, direct, proxy, v = _route_signal(sig, value, op, pe, ctx, L.OP_SIGNAL)
    if op == L.SET:
        tl.atomic_xchg(remote, v, mask=direct, sem="release", scope="sys")
    else:
        tl.atomic_add(remote, v, mask=direct, sem="release", scope="sys")
    if proxy:
        _proxy.proxy_signal(sig, v, op, pe, ctx)


@triton.jit
def put_signal(dst, src, sig, value, op: tl.constexpr, pe, ctx, mask=None):
    """put(dst, src, pe) then signal(sig, value, op, pe): a PE that acquires the signal sees
    the whole tile."""
    sig_remote, sig_direct, sig_proxy, v = _route_signal(sig, value, op, pe, ctx, L.OP_PUT_SIGNAL)
    remote, direct, proxy = route(dst, pe, ctx, mask, L.OP_PUT_SIGNAL,
                                  L.ROLE_DESTINATION_TILE, True)
    direct = direct & sig_direct
    proxy = proxy & sig_proxy
    m = and_mask(mask, direct)
    tl.store(remote, tl.load(src, mask=m), mask=m)
    # Every thread's part of the tile is written before the one release below.
    tl.debug_barrier()
    if op == L.SET:
        tl.atomic_xchg(sig_remote, v, mask=direct, sem="release", scope="sys")
    else:
        tl.atomic_add(sig_remote, v, mask=direct, sem="release", scope="sys")
    if proxy:
        _proxy.proxy_put_signal(dst, src, sig, v, op, pe, ctx, mask)


@triton.jit
def wait_until(sig, cmp: tl.constexpr, value, ctx):
    """Waits until the local uint64 signal `sig` (this PE's heap) compares `cmp` (tx.EQ, NE,
    GT, GE, LT, LE) to `value`, reading it with acquire at system scope: afterwards this program
    sees what the signalling PE wrote before its release. Returns the value seen (uint64). On
    timeout or abort it returns the last value seen, the failure recorded."""
    me = tl.load(ctx + L.MY_PE)
    remote, ok, proxy = route(sig, me, ctx, None, L.OP_WAIT_UNTIL, L.ROLE_SIGNAL, False)
    want = tl.cast(value, tl.uint64)
    seen = tl.cast(0, tl.uint64)
    done = not ok
    if ok:
        seen = tl.atomic_load(sig, sem="acquire", scope="sys")
        done = _holds(seen, cmp, want)
    timeout_ns = tl.load(ctx + L.TIMEOUT_NS)
    start_ns = now_ns()
    turns = 0
    while not done:
        spin_pause()
        seen = tl.atomic_load(sig, sem="acquire", scope="sys")
        done = _holds(seen, cmp, want)
        turns += 1
        if not done:
            end = _wait_ends(ctx, turns, start_ns, timeout_ns, L.OP_WAIT_UNTIL)
            if end == _TIMED_OUT:
                seen = tl.atomic_load(sig, sem="acquire", scope="sys")
                if not _holds(seen, cmp, want):
                    fail(ctx, L.CODE_TIMEOUT, L.KIND_WAIT_TIMEOUT, L.OP_WAIT_UNTIL,
                         tl.cast(sig, tl.int64), cmp, want, seen, -1, 0)
            done = end != 0
    # The acquire was one thread's: the program's other threads read after it.
    tl.debug_barrier()
    return seen


@triton.constexpr_function
def _signal_role(shape):
    """How a checked-mode diagnostic names a signal pointer: "signal", or "signals" for a block
    (as the C++ calls on arrays of signals say)."""
    return L.ROLE_SIGNAL.value if len(shape) == 0 else L.ROLE_SIGNALS.value


@triton.jit
def _read_signals(sigs, active):
    """The values of the local signals `sigs` (scalar or block) where `active`, read with acquire
    at system scope (0 elsewhere)."""
    return tl.where(active, tl.atomic_load(sigs, mask=active, sem="acquire", scope="sys"), 0)


@triton.jit
def _tested(sigs, cmp: tl.constexpr, value, ctx, mask, OP: tl.constexpr):
    """(holds, active, ok): where the active local signals `sigs` compare `cmp` to `value` now,
    which take part (masked in; none once a check failed), and whether the checks passed."""
    me = tl.load(ctx + L.MY_PE)
    remote, ok, proxy = route(sigs, me, ctx, mask, OP, _signal_role(sigs.shape), False)
    active = active_mask(sigs, mask) & ok
    holds = active & _holds(_read_signals(sigs, active), cmp, tl.cast(value, tl.uint64))
    # Each thread acquired its own elements: the program's other threads read after them.
    tl.debug_barrier()
    return holds, active, ok


@triton.jit
def test(sig, cmp: tl.constexpr, value, ctx):
    """Whether the local uint64 signal `sig` (scalar, or a block: elementwise) compares `cmp` to
    `value` now (int1, sig's shape), without waiting: one read with acquire at system scope, so
    where it holds this program sees what the signalling PE wrote before its release. False
    after a failed check (recorded)."""
    holds, active, ok = _tested(sig, cmp, value, ctx, None, L.OP_TEST)
    return holds


@triton.jit
def test_all(sigs, cmp: tl.constexpr, value, ctx, mask=None):
    """Whether every local signal of the block `sigs` that `mask` selects compares `cmp` to
    `value` now (int1 scalar; true when none is selected), each read as test reads it. False
    after a failed check (recorded)."""
    holds, active, ok = _tested(sigs, cmp, value, ctx, mask, L.OP_TEST_ALL)
    missing = tl.sum((active & (holds == 0)).to(tl.int32))
    return ok & (missing == 0)


@triton.jit
def test_any(sigs, cmp: tl.constexpr, value, ctx, mask=None, status=None):
    """The index (int32) of the lowest signal of the 1-D block `sigs` that `mask` selects and
    that compares `cmp` to `value` now, or tx.NPOS (-1) when none does; each read as test reads
    it, so this program sees what that signal's writer released. With `status` (a block of
    integer words, sigs' shape): only elements whose status is 0 take part, and the one returned
    gets status 1, so repeated calls drain arrivals one by one without resetting a signal. NPOS
    after a failed check."""
    tl.static_assert(len(sigs.shape) == 1, "test_any takes a 1-D block of signals")
    N: tl.constexpr = sigs.shape[0]
    i = tl.arange(0, N)
    if status is None:
        holds, active, ok = _tested(sigs, cmp, value, ctx, mask, L.OP_TEST_ANY)
        first = tl.min(tl.where(holds, i, N))
    else:
        candidate, ok = _candidates(sigs, status, ctx, mask, L.OP_TEST_ANY)
        holds = candidate & _holds(_read_signals(sigs, candidate), cmp, tl.cast(value, tl.uint64))
        first = tl.min(tl.where(holds, i, N))
        tl.store(status, tl.full((N, ), 1, status.dtype.element_ty), mask=i == first)
        tl.debug_barrier()
    return tl.where(first < N, first, NPOS)


@triton.jit
def _candidates(sigs, status, ctx, mask, OP: tl.constexpr):
    """(candidate, ok): the elements of the 1-D block `sigs` that `mask` selects and whose
    `status` is 0 (none once the checked-mode bounds check failed), and whether it passed."""
    me = tl.load(ctx + L.MY_PE)
    remote, ok, proxy = route(sigs, me, ctx, mask, OP, _signal_role(sigs.shape), False)
    selected = active_mask(sigs, mask) & ok
    return selected & (tl.load(status, mask=selected, other=1) == 0), ok


@triton.jit
def _mark_found(found, status, indices):
    """Sets status to 1 where `found` and writes the found positions to indices[0..count) in
    increasing order; returns count (int32)."""
    N: tl.constexpr = found.shape[0]
    i = tl.arange(0, N)
    # Found element i goes to indices[k], k = how many found ones precede it: the address of
    # that slot is taken from the indices block itself, so it may have any strides.
    slot = tl.gather(tl.cast(indices, tl.int64),
                     tl.where(found, tl.cumsum(found.to(tl.int32), 0) - 1, 0), 0)
    tl.store(tl.cast(slot, indices.dtype), i.to(indices.dtype.element_ty), mask=found)
    tl.store(status, tl.full((N, ), 1, status.dtype.element_ty), mask=found)
    tl.debug_barrier()
    return tl.sum(found.to(tl.int32))


@triton.jit
def _nth_awaited(candidate, rank, seen, j):
    """(index, value) of the j-th awaited signal (0, 0 when there are fewer)."""
    N: tl.constexpr = candidate.shape[0]
    pick = candidate & (rank == j)
    index = tl.sum(tl.where(pick, tl.arange(0, N), 0).to(tl.int64))
    return index, tl.sum(tl.where(pick, seen, 0))


@triton.jit
def _some_timeout(sigs, candidate, selected, seen, cmp: tl.constexpr, want, ctx):
    """Records wait_until_some's timeout as a some_timeout record (the C++ text: "none of k
    awaited signals (of n) from <first> reached (...); saw [i]=v ..."), with the first four
    awaited signals' indices and values, and raises the abort."""
    N: tl.constexpr = sigs.shape[0]
    i = tl.arange(0, N)
    first = i == tl.min(tl.where(selected, i, N))
    n = tl.sum(selected.to(tl.int64))
    awaited = tl.sum(candidate.to(tl.int64))
    shown = tl.minimum(awaited, 4)
    rank = tl.cumsum(candidate.to(tl.int32), 0) - 1
    i0, v0 = _nth_awaited(candidate, rank, seen, 0)
    i1, v1 = _nth_awaited(candidate, rank, seen, 1)
    i2, v2 = _nth_awaited(candidate, rank, seen, 2)
    i3, v3 = _nth_awaited(candidate, rank, seen, 3)
    fail(ctx, L.CODE_TIMEOUT, L.KIND_SOME_TIMEOUT, L.OP_WAIT_UNTIL_SOME,
         tl.sum(tl.where(first, tl.cast(sigs, tl.int64), 0)), n | (awaited << 32),
         tl.cast(cmp, tl.int64) | (shown << 8), want, i0 | (i1 << 32), i2 | (i3 << 32), v0, v1,
         v2, v3)


@triton.jit
def test_some(sigs, status, indices, cmp: tl.constexpr, value, ctx, mask=None):
    """wait_until_some's sweep without the wait: every candidate of the 1-D block `sigs` (masked
    in, status 0) that compares `cmp` to `value` now gets status 1 and its index written to
    indices[0..count); returns count (int32; 0: none yet). Reads as test reads. 0 after a failed
    check."""
    tl.static_assert(len(sigs.shape) == 1, "test_some takes a 1-D block of signals")
    candidate, ok = _candidates(sigs, status, ctx, mask, L.OP_TEST_SOME)
    found = candidate & _holds(_read_signals(sigs, candidate), cmp, tl.cast(value, tl.uint64))
    return _mark_found(found, status, indices)


@triton.jit
def wait_until_some(sigs, status, indices, cmp: tl.constexpr, value, ctx, mask=None):
    """Waits until at least one candidate of the 1-D block of local uint64 signals `sigs`
    compares `cmp` to `value`, and returns how many did in the sweep that found them (int32).
    Candidates are the elements `mask` selects whose `status` (a block of integer words, sigs'
    shape) is 0; for each one found, status becomes 1 and its index is written to `indices` (a
    block of integer words, sigs' shape): indices[0..count) in increasing order, the rest
    untouched. So a consumer drains several arrivals without resetting a signal: call again
    with the same status until every index was found. No candidate: returns 0 at once. Reads
    with acquire at system scope (this program sees what each found signal's writer released);
    bounded like wait_until (the timeout reads as C++'s: "none of k awaited signals (of n) from
    <first signal> reached (...); saw [i]=v ...", up to four values); 0 after a failure."""
    tl.static_assert(len(sigs.shape) == 1, "wait_until_some takes a 1-D block of signals")
    candidate, ok = _candidates(sigs, status, ctx, mask, L.OP_WAIT_UNTIL_SOME)
    want = tl.cast(value, tl.uint64)
    seen = _read_signals(sigs, candidate)
    found = candidate & _holds(seen, cmp, want)
    done = tl.max(tl.where(candidate, 1, 0)) == 0
    if not done:
        done = tl.max(found.to(tl.int32)) != 0
    timeout_ns = tl.load(ctx + L.TIMEOUT_NS)
    start_ns = now_ns()
    turns = 0
    while not done:
        spin_pause()
        seen = _read_signals(sigs, candidate)
        found = candidate & _holds(seen, cmp, want)
        done = tl.max(found.to(tl.int32)) != 0
        turns += 1
        if not done:
            end = _wait_ends(ctx, turns, start_ns, timeout_ns, L.OP_WAIT_UNTIL_SOME)
            if end == _TIMED_OUT:
                seen = _read_signals(sigs, candidate)
                found = candidate & _holds(seen, cmp, want)
                if tl.max(found.to(tl.int32)) == 0:
                    _some_timeout(sigs, candidate, active_mask(sigs, mask), seen, cmp, want, ctx)
            done = end != 0
    return _mark_found(found, status, indices)


@triton.jit
def _arrive(ctx, seen_word, arrivals, bases, seen_wire, arrivals_wire, n, pe, me, NOTE_SEEN):
    """Barrier `n`'s arrival of this PE at `pe`: first (for diagnostics only) the number of the
    barrier it entered into `pe`'s copy of `seen_word`, then +1 on `pe`'s copy of `arrivals` with
    release. Both are this PE's words; `pe`'s copies lie at the same offset from `pe`'s entry in
    the context's table at word `bases` (the heap bases for a team's words, the control pages for
    the whole job's). When `pe` is not mapped, the network proxy gets the heap offsets of
    `seen_wire` and `arrivals_wire` instead."""
    if tl.load(ctx + L.HEAP_BASES + pe) == 0:
        if NOTE_SEEN:
            _proxy.proxy_atomic(seen_wire, n, 0, pe, ctx, None, AMO=_proxy.AMO_STORE,
                                FETCH=False, FENCED=False, OP=L.OP_BARRIER)
        _proxy.proxy_atomic(arrivals_wire, tl.cast(1, tl.uint64), 0, pe, ctx, None,
                            AMO=_proxy.AMO_ADD, FETCH=False, FENCED=True, OP=L.OP_BARRIER)
    else:
        shift = (tl.load(ctx + bases + pe) - tl.load(ctx + bases + me)) // 8
        if NOTE_SEEN:
            tl.atomic_store(seen_word + shift, n, sem="relaxed", scope="sys")
        tl.atomic_add(arrivals + shift, tl.cast(1, tl.uint64), sem="release", scope="sys")


@triton.jit
def _await_arrivals(ctx, arrivals, n, members, team):
    """Waits until this PE's `arrivals` counter reaches n * members (acquire); on timeout
    records which barrier and the count seen (with the team, for a team barrier) and raises the
    abort."""
    target = n * tl.cast(members, tl.uint64)
    timeout_ns = tl.load(ctx + L.TIMEOUT_NS)
    start_ns = now_ns()
    seen = tl.atomic_load(arrivals, sem="acquire", scope="sys")
    done = seen >= target
    turns = 0
    while not done:
        spin_pause()
        seen = tl.atomic_load(arrivals, sem="acquire", scope="sys")
        done = seen >= target
        turns += 1
        if not done:
            end = _wait_ends(ctx, turns, start_ns, timeout_ns, L.OP_BARRIER)
            if end == _TIMED_OUT:
                seen = tl.atomic_load(arrivals, sem="acquire", scope="sys")
                if seen < target:
                    if team is None:
                        fail(ctx, L.CODE_TIMEOUT, L.KIND_BARRIER_TIMEOUT, L.OP_BARRIER, n, seen,
                             0, 0, 0, 0)
                    else:
                        fail(ctx, L.CODE_TIMEOUT, L.KIND_TEAM_BARRIER_TIMEOUT, L.OP_BARRIER, n,
                             seen, tl.load(team + L.TEAM_START), tl.load(team + L.TEAM_STRIDE),
                             tl.load(team + L.TEAM_SIZE), tl.cast(arrivals, tl.int64))
            done = end != 0


@triton.jit
def _world_barrier(ctx):
    me = tl.load(ctx + L.MY_PE)
    npes = tl.load(ctx + L.N_PES)
    entered = control_word(ctx, L.BARRIER_ENTERED, me)
    n = tl.atomic_add(entered, tl.cast(1, tl.uint64), sem="relaxed", scope="gpu") + 1
    note_seen = me < L.BARRIER_SEEN_PES
    seen_word = control_word(ctx, L.BARRIER_SEEN, me) + me
    arrivals = control_word(ctx, L.BARRIER_ARRIVALS, me)
    # Each PE's copies are in its control page: the control pages follow the heap bases.
    controls = L.HEAP_BASES + npes
    seen_wire = control_wire_word(ctx, L.BARRIER_SEEN + me)
    arrivals_wire = control_wire_word(ctx, L.BARRIER_ARRIVALS)
    ring = tl.load(ctx + L.PROXY)
    for i in range(0, npes):
        pe = (me + i) % npes
        if tl.load(ctx + L.HEAP_BASES + pe) == 0 and ring == 0:
            fail(ctx, L.CODE_TRANSPORT, L.KIND_PE_NOT_MAPPED, L.OP_BARRIER, pe, 0, 0, 0, 0, 0)
        else:
            _arrive(ctx, seen_word, arrivals, controls, seen_wire, arrivals_wire, n, pe, me,
                    note_seen)
    _await_arrivals(ctx, arrivals, n, npes, None)


@triton.jit
def _team_barrier(ctx, team):
    """The C++ device team barrier's algorithm (impl/barrier_funcs.hpp) over the team's barrier
    words (TeamBarrierWords, the end of its workspace): barrier #n of a member adds 1 to every
    member's arrival word and waits for n * size on its own; the words are never reset."""
    me = tl.load(ctx + L.MY_PE)
    start = tl.load(team + L.TEAM_START)
    stride = tl.load(team + L.TEAM_STRIDE)
    size = tl.load(team + L.TEAM_SIZE)
    my_rank = tl.load(team + L.TEAM_MY_RANK)
    words_at = tl.load(team + L.TEAM_BARRIER_WORDS)
    d = me - start
    rank_here = tl.where((d >= 0) & (d % stride == 0) & (d // stride < size), d // stride, -1)
    if (words_at == 0) | (my_rank < 0) | (rank_here != my_rank):
        record(ctx, L.CODE_INVALID_ARGUMENT, L.KIND_TEAM_NOT_MEMBER, L.OP_BARRIER, start, stride,
               size, my_rank, (words_at != 0).to(tl.int64), 0)
    elif aborting(ctx, L.OP_BARRIER) == 0:
        words = tl.cast(words_at, tl.pointer_type(tl.uint64))
        n = tl.atomic_add(words + L.TEAM_BARRIER_ENTERED, tl.cast(1, tl.uint64), sem="relaxed",
                          scope="gpu") + 1
        arrivals = words + L.TEAM_BARRIER_ARRIVALS
        ring = tl.load(ctx + L.PROXY)
        for i in range(0, size):
            pe = start + ((my_rank + i) % size) * stride
            if tl.load(ctx + L.HEAP_BASES + pe) == 0 and ring == 0:
                fail(ctx, L.CODE_TRANSPORT, L.KIND_PE_NOT_MAPPED, L.OP_BARRIER, pe, 0, 0, 0, 0,
                     0)
            else:
                # The words lie at the same heap offset on every member.
                seen_word = words + L.TEAM_BARRIER_SEEN + my_rank
                _arrive(ctx, seen_word, arrivals, L.HEAP_BASES, seen_word, arrivals, n, pe, me,
                        True)
        _await_arrivals(ctx, arrivals, n, size, team)


@triton.jit
def barrier(ctx, team=None):
    """Returns once every PE entered this barrier (the n-th barrier of each PE, counted together
    with the C++ device barriers and rt.device_barrier() of this job: they share the counters);
    what each PE wrote before it is visible to all after it. With `team` (tx.team(rt, t), a
    tessera.Team's words): once every member of the team entered its n-th barrier on that team
    (the C++ device team barrier's words and algorithm); only members call it, else it records
    invalid_argument. Call it from ONE program of a launch (each call is one PE's arrival).
    Quiets first. Bounded: on timeout it records which barrier and the arrival count seen (and,
    over a team, the members not yet arrived), and raises the abort."""
    quiet(ctx)
    if team is None:
        if aborting(ctx, L.OP_BARRIER) == 0:
            _world_barrier(ctx)
    else:
        _team_barrier(ctx, team)
    tl.debug_barrier()
