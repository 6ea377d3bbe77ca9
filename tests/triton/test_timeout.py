"""The timeout path of tessera.triton's waits, each test a whole job (tessera-run -np 2) of
this file run as a script with TESSERA_TIMEOUT=3: PE 0 waits in a Triton kernel for what never
comes; PE 1 waits too, with a bound five times as long (twice was not enough on two loaded
cores: PE 0's interpreted wait_until_some noticed its deadline late, and PE 1's own bound
expired first). PE 0's wait expires, records the failure and raises the job's abort:
tessera.triton.check(rt) on PE 0 raises TimeoutError naming the PE, the signal's heap offset
and allocation and the value seen (the C++ device API's message), and PE 1's wait ends at the
abort, its check raising PeerLostError naming PE 0, well within 5 s of PE 0's timeout.
TESSERA_RUN names the launcher (ctest sets it).

Script usage: test_timeout.py wait|barrier|some|team, with TEST_TIMEOUT_START_DIR naming an empty
folder where the two PEs meet before tessera.init. Prints "PE p: offset <heap offset of the
signal>", then "PE p: <ExceptionClass>: <str(e)> [after <s> s]" and exits 3 (TimeoutError), 42
(PeerLostError), 1 otherwise."""

import os
import re
import subprocess
import sys
import tempfile
import time

import pytest
import torch
import triton
import triton.language as tl

import tessera
import tessera.triton as tx

TIMEOUT_S = 3


@triton.jit
def wait_for(sig, value, ctx):
    tx.wait_until(sig, tx.GE, value, ctx)


@triton.jit
def barrier(ctx):
    tx.barrier(ctx)


@triton.jit
def team_barrier(ctx, team):
    tx.barrier(ctx, team)


@triton.jit
def wait_for_some(sigs, status, ctx):
    """wait_until_some (>= 100) over 8 signals, of which status skips the first."""
    offs = tl.arange(0, 8)
    tx.wait_until_some(sigs + offs, status + offs, status + offs, tx.GE, 100, ctx)


def say(line):
    sys.stdout.write(line + "\n")  # one write per line: PEs share the launcher's stdout
    sys.stdout.flush()


def start_together(folder, bound_s=60):
    """Returns once both PEs got here (a file each in `folder`), so they call tessera.init within
    moments of each other: the job's 3 s bound covers the bootstrap too, and on two loaded cores
    one interpreter's imports (torch, triton) can end seconds after the other's (PE 0 then timed
    out waiting for PE 1's HELLO)."""
    rank = int(os.environ["TESSERA_RANK"])
    open(os.path.join(folder, f"ready.{rank}"), "w").close()
    deadline = time.monotonic() + bound_s
    while not all(os.path.exists(os.path.join(folder, f"ready.{r}")) for r in (0, 1)):
        if time.monotonic() > deadline:
            say(f"PE {rank}: the other PE did not start within {bound_s} s")
            sys.exit(1)
        time.sleep(0.01)


def job(mode):
    start_together(os.environ["TEST_TIMEOUT_START_DIR"])
    rt = tessera.init()
    if mode == "team":
        rt.team_world()  # collective: PE 1 makes it too
    pad = rt.zeros(24, "uint64")  # so the signal is not at offset 0
    sig = rt.zeros(8, "uint64")
    rt.barrier()
    ctx = tx.context(rt)
    say(f"PE {rt.pe}: offset {sig.offset} pad {pad.offset}")
    start = time.monotonic()
    try:
        if rt.pe == 0:
            if mode == "wait":
                wait_for[(1, )](torch.from_dlpack(sig), 1, ctx)
            elif mode == "team":
                team_barrier[(1, )](ctx, tx.team(rt, rt.team_world()))
            elif mode == "some":
                words = torch.from_dlpack(sig)
                words.copy_(torch.arange(8) * 10)  # signal i holds 10 i
                status = torch.tensor([1, 0, 0, 0, 0, 0, 0, 0], dtype=torch.int64)
                wait_for_some[(1, )](words, status, ctx)
            else:
                barrier[(1, )](ctx)
        else:
            longer = ctx.clone()
            longer[tessera.TRITON_CONTEXT_WORDS["timeout_ns"]] *= 5
            wait_for[(1, )](torch.from_dlpack(sig), 1, longer)
        tx.check(rt)
        say(f"PE {rt.pe}: no error")
        return 1
    except tessera.Error as e:
        say(f"PE {rt.pe}: {type(e).__name__}: {e} [after {time.monotonic() - start:.2f} s]")
        if isinstance(e, tessera.TimeoutError):
            return 3
        if isinstance(e, tessera.PeerLostError):
            return 42
        return 1


def run_job(mode):
    launcher = os.environ.get("TESSERA_RUN")
    if not launcher:
        pytest.skip("TESSERA_RUN (the tessera-run binary) is not set; ctest sets it")
    with tempfile.TemporaryDirectory() as start_dir:
        env = dict(os.environ, TESSERA_TIMEOUT=str(TIMEOUT_S), TRITON_INTERPRET="1",
                   TEST_TIMEOUT_START_DIR=start_dir)
        proc = subprocess.run([launcher, "-np", "2", sys.executable, __file__, mode], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              timeout=180)
    lines = {int(m.group(1)): (m.group(2), float(m.group(3))) for m in re.finditer(
        r"^PE (\d+): (\w+Error: .*) \[after ([0-9.]+) s\]$", proc.stdout, re.M)}
    offset = re.search(r"^PE 0: offset (\d+)", proc.stdout, re.M)
    assert offset and sorted(lines) == [0, 1], proc.stdout
    return proc, lines, int(offset.group(1))


def test_wait_that_never_completes_times_out_and_the_other_pe_sees_peer_lost():
    proc, lines, offset = run_job("wait")
    text, after = lines[0]
    assert re.fullmatch(
        f"TimeoutError: tessera \\[PE 0\\] Timeout: wait_until on PE 0 timed out after "
        f"{TIMEOUT_S * 1000} ms: signal at heap offset {offset} \\(allocation #1: offset "
        f"{offset}, \\d+ bytes\\) awaited \\(value >= 1\\), saw 0", text), proc.stdout
    assert TIMEOUT_S <= after < TIMEOUT_S + 5, proc.stdout
    text, after_1 = lines[1]
    assert text == ("PeerLostError: tessera [PE 1] PeerLost: wait_until on PE 1 gave up: PE 0 "
                    "failed and aborted the job (its own message says why)"), proc.stdout
    # PE 1 started waiting about when PE 0 did: it heard of the abort within 5 s of the timeout.
    assert after_1 < TIMEOUT_S + 5, proc.stdout
    assert proc.returncode != 0


def test_wait_until_some_that_never_completes_reads_as_the_cpp_timeout():
    proc, lines, offset = run_job("some")
    text, after = lines[0]
    # C++'s wording (report_some_timeout): the awaited count (signal 0 is skipped by its status)
    # of the 8, the first signal, then the awaited ones as [index]=value, four of the seven here.
    assert re.fullmatch(
        f"TimeoutError: tessera \\[PE 0\\] Timeout: wait_until_some on PE 0 timed out after "
        f"{TIMEOUT_S * 1000} ms: none of 7 awaited signals \\(of 8\\) from signal at heap offset "
        f"{offset} \\(allocation #1: offset {offset}, \\d+ bytes\\) reached \\(value >= 100\\); "
        f"saw \\[1\\]=10 \\[2\\]=20 \\[3\\]=30 \\[4\\]=40 \\.\\.\\.", text), proc.stdout
    assert TIMEOUT_S <= after < TIMEOUT_S + 5, proc.stdout
    assert lines[1][0].startswith("PeerLostError: tessera [PE 1] PeerLost: wait_until on PE 1 "
                                  "gave up: PE 0 failed"), proc.stdout


def test_team_barrier_nobody_else_enters_times_out_naming_the_missing_member():
    proc, lines, offset = run_job("team")
    text, after = lines[0]
    assert re.fullmatch(
        f"TimeoutError: tessera \\[PE 0\\] Timeout: barrier on team \\(start 0, stride 1, size "
        f"2\\) on PE 0 timed out after {TIMEOUT_S * 1000} ms in barrier #1: arrival counter "
        f"\\(team workspace, heap offset \\d+\\) awaited \\(value >= 2\\), saw 1; not yet "
        f"entered by PE 1 \\(team rank 1, at #0\\)", text), proc.stdout
    assert TIMEOUT_S <= after < TIMEOUT_S + 5, proc.stdout
    assert lines[1][0].startswith("PeerLostError: tessera [PE 1] PeerLost: wait_until on PE 1 "
                                  "gave up: PE 0 failed"), proc.stdout


def test_barrier_nobody_else_enters_times_out_naming_the_missing_pe():
    proc, lines, offset = run_job("barrier")
    text, after = lines[0]
    assert text == ("TimeoutError: tessera [PE 0] Timeout: barrier on PE 0 timed out after "
                    f"{TIMEOUT_S * 1000} ms in barrier #1: arrival counter (control area) "
                    "awaited (value >= 2), saw 1; not yet entered by PE 1 (at #0)"), proc.stdout
    text, after_1 = lines[1]
    assert text.startswith("PeerLostError: tessera [PE 1] PeerLost: wait_until on PE 1 gave up: "
                           "PE 0 failed"), proc.stdout
    assert after_1 < TIMEOUT_S + 5, proc.stdout


if __name__ == "__main__":
    sys.exit(job(sys.argv[1]))
