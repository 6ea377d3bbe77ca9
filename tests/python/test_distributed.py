"""tessera.distributed, the torch.distributed backend "tessera": each test starts a whole job of
jobs/dist_job.py, one process per rank with RANK/WORLD_SIZE/MASTER_ADDR/MASTER_PORT (what torchrun
sets; a ctest entry runs the collectives under torchrun itself), and checks every rank's exit
status and last line. The scenarios check their own results (see dist_job.py)."""

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch", reason="torch is not installed in this Python (pip install torch)")

JOB = Path(__file__).parent / "jobs" / "dist_job.py"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_job(scenario, world, timeout_s=150, tessera_timeout="30", extra_env=None):
    """Every rank's (exit status, output); kills the job past timeout_s."""
    port = free_port()
    procs = []
    for rank in range(world):
        env = dict(os.environ, RANK=str(rank), WORLD_SIZE=str(world), LOCAL_RANK=str(rank),
                   LOCAL_WORLD_SIZE=str(world), MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port),
                   TESSERA_TIMEOUT=tessera_timeout, **(extra_env or {}))
        for k in ("TESSERA_UNIQUE_ID", "TESSERA_RANK", "TESSERA_SIZE"):  # not a tessera-run job
            env.pop(k, None)
        procs.append(subprocess.Popen([sys.executable, str(JOB), scenario], env=env, text=True,
                                      stdout=subprocess.PIPE, stderr=subprocess.STDOUT))
    results = []
    try:
        for p in procs:
            out, _ = p.communicate(timeout=timeout_s)
            results.append((p.returncode, out))
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    return results


def assert_ok(results, scenario):
    for rank, (status, out) in enumerate(results):
        assert status == 0 and f"rank {rank}: ok {scenario}" in out, f"rank {rank} (exit {status}):\n{out}"


@pytest.mark.parametrize("world", [1, 2, 4, 5])
def test_every_call_matches_its_reference(world):
    assert_ok(run_job("collectives", world), "collectives")


@pytest.mark.parametrize("world", [4, 5])
def test_sub_groups_are_tessera_teams(world):
    assert_ok(run_job("subgroups", world, extra_env={"TESSERA_DIST_SUBGROUP_STAGING": "65536"}), "subgroups")


def test_bad_input_raises_on_every_rank_and_the_group_goes_on():
    assert_ok(run_job("bad-input", 3), "bad-input")


def test_a_rank_that_dies_mid_step_is_peer_lost_on_the_others():
    results = run_job("rank-dies", 2, timeout_s=60, tessera_timeout="10")
    status, out = results[1]
    assert status == 7, f"rank 1 should have exited 7:\n{out}"
    status, out = results[0]
    assert status == 0 and "rank 0: saw PeerLostError" in out, f"rank 0 (exit {status}):\n{out}"


def test_a_runtime_of_the_programs_own_serves_the_group_and_outlives_it():
    assert_ok(run_job("shared-runtime", 2), "shared-runtime")


@pytest.mark.parametrize("world", [2, 4])
def test_ddp_trains_like_gloo(world):
    assert_ok(run_job("ddp", world), "ddp")


def test_fsdp2_trains_like_one_process():
    assert_ok(run_job("fsdp", 2), "fsdp")
