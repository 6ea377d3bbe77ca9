"""Faults seen from Python: each test starts a whole job (tessera-run) of jobs/fault_job.py and
checks what every PE raised. TESSERA_RUN names the launcher (ctest sets it)."""

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

JOB = Path(__file__).parent / "jobs" / "fault_job.py"


def run_job(mode, np_, timeout_s):
    launcher = os.environ.get("TESSERA_RUN")
    if not launcher:
        pytest.skip("TESSERA_RUN (the tessera-run binary) is not set; ctest sets it")
    env = dict(os.environ, TESSERA_TIMEOUT=str(timeout_s))
    start = time.monotonic()
    proc = subprocess.run([launcher, "-np", str(np_), sys.executable, str(JOB), mode], env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120)
    elapsed = time.monotonic() - start
    lines = {int(m.group(1)): m.group(2) for m in re.finditer(r"^PE (\d+): (\w+(?:Error|Interrupt): .*)$", proc.stdout, re.M)}
    return proc, lines, elapsed


def test_never_completing_wait_times_out_and_others_see_peer_lost():
    proc, lines, elapsed = run_job("never-signalled", 3, 3)
    assert proc.returncode != 0, proc.stdout
    assert lines[0].startswith("TimeoutError: tessera [PE 0] Timeout:"), proc.stdout
    assert "heap offset" in lines[0] and "[e.pe=0]" in lines[0], lines[0]
    for pe in (1, 2):
        assert lines[pe].startswith("PeerLostError:"), proc.stdout
        assert "PE 0" in lines[pe] and f"[e.pe={pe}]" in lines[pe]
    # The timeout (3 s) plus well under 5 s for the others to hear of it.
    assert elapsed < 3 + 5, (elapsed, proc.stdout)


def test_killed_pe_is_peer_lost_on_the_others():
    proc, lines, elapsed = run_job("die-in-wait", 3, 20)
    assert "rank 1" in proc.stdout and "signal 9" in proc.stdout, proc.stdout
    for pe in (0, 2):
        assert lines[pe].startswith("PeerLostError:"), proc.stdout
        assert "PE 1 is lost" in lines[pe]
    assert elapsed < 10, (elapsed, proc.stdout)


def shm_entries():
    return set(os.listdir("/dev/shm")) if os.path.isdir("/dev/shm") else set()


def test_sigint_in_a_wait_aborts_the_job_on_every_pe():
    before = shm_entries()
    # A bound far above the few seconds allowed: the waits must end by the abort, not by it.
    proc, lines, elapsed = run_job("sigint-in-wait", 2, 60)
    assert lines[0].startswith("KeyboardInterrupt: tessera [PE 0] wait_until interrupted (SIGINT)"), proc.stdout
    assert lines[1].startswith("PeerLostError:") and "PE 0" in lines[1], proc.stdout
    assert "[e.pe=1]" in lines[1], lines[1]
    assert elapsed < 15, (elapsed, proc.stdout)
    # The heap is memfd-backed: the job leaves nothing in /dev/shm (entries others' jobs made
    # meanwhile are told apart by name: ours would carry "tessera" or a PE's pid).
    pids = re.findall(r"^PE \d+: pid (\d+)$", proc.stdout, re.M)
    assert len(pids) == 2, proc.stdout
    new = [e for e in shm_entries() - before if "tessera" in e or any(p in e for p in pids)]
    assert not new, new
