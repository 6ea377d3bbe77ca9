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
    lines = {int(m.group(1)): m.group(2) for m in re.finditer(r"^PE (\d+): (\w+Error: .*)$", proc.stdout, re.M)}
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
