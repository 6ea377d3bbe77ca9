"""Every Triton example (examples/triton/*.py) run as its own job under TRITON_INTERPRET=1: each
must exit 0 with one verification line per PE ending in "ok". TESSERA_RUN names tessera-run
(ctest sets it); the MPI case uses TESSERA_MPIEXEC or the mpirun on PATH."""

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "triton"

# (example, launcher options, PEs, what every PE's line says, what some PE's line says);
# kv_handoff is the acceptance command, also at 4 PEs and across two pretend nodes (the proxy).
JOBS = [
    ("gemm_all_scatter", [], 2, r"gemm \+ all-scatter", None),
    ("producer_consumer", [], 2, r"producer-consumer", None),
    ("ag_gemm_fused", [], 2, r"fused all-gather \+ gemm", None),
    ("all_reduce", [], 2, r"one-shot all-reduce", None),
    ("litmus", [], 2, r"\d+ rounds from PE \d: 0 violations", None),
    ("kv_handoff", [], 2, r"kv hand-off over 2 PEs", r"decoded 1 request.*read in place on PE 0"),
    ("kv_handoff", [], 4, r"kv hand-off over 4 PEs", r"decoded 3 request.*read in place on PE 0"),
    ("kv_handoff", ["--node-ids", "a,b"], 2, r"kv hand-off over 2 PEs", r"fetched \(get\) from PE 0"),
]


def interpreter_env():
    return dict(os.environ, TRITON_INTERPRET="1", TESSERA_TIMEOUT=os.environ.get("TESSERA_TIMEOUT", "30"))


def check_job(command, n_pes, says, somewhere=None):
    proc = subprocess.run(command, env=interpreter_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, timeout=180)
    assert proc.returncode == 0, proc.stdout
    lines = {int(m.group(1)): m.group(2) for m in re.finditer(r"^PE (\d+): (.*)$", proc.stdout, re.M)}
    assert sorted(lines) == list(range(n_pes)), proc.stdout
    for pe, line in lines.items():
        assert line.endswith(": ok"), (pe, proc.stdout)
        assert re.search(says, line), (pe, says, line)
    if somewhere:
        assert any(re.search(somewhere, line) for line in lines.values()), (somewhere, proc.stdout)


def launcher():
    path = os.environ.get("TESSERA_RUN")
    if not path:
        pytest.skip("TESSERA_RUN (the tessera-run binary) is not set; ctest sets it")
    return path


@pytest.mark.parametrize("example,options,n_pes,says,somewhere", JOBS,
                         ids=[f"{e}-np{n}{'-two-nodes' if o else ''}" for e, o, n, _, _ in JOBS])
def test_example_verifies_under_tessera_run(example, options, n_pes, says, somewhere):
    check_job([launcher(), "-np", str(n_pes), *options, sys.executable, str(EXAMPLES / f"{example}.py")], n_pes,
              says, somewhere)


def test_kv_handoff_verifies_under_mpirun():
    mpiexec = os.environ.get("TESSERA_MPIEXEC") or shutil.which("mpirun")
    if not mpiexec:
        pytest.skip("no mpirun (TESSERA_MPIEXEC unset and none on PATH)")
    check_job([mpiexec, "-np", "2", "--oversubscribe", sys.executable, str(EXAMPLES / "kv_handoff.py")], 2,
              r"kv hand-off over 2 PEs")


def load(example):
    spec = importlib.util.spec_from_file_location(f"triton_example_{example}", EXAMPLES / f"{example}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def example_names():
    return sorted(p.stem for p in EXAMPLES.glob("*.py"))


def test_every_example_is_run_here():
    assert example_names() == sorted({job[0] for job in JOBS})


@pytest.mark.parametrize("example", example_names())
def test_importing_an_example_lists_its_kernels_and_runs_nothing(example, monkeypatch):
    import tessera

    def init(*args, **kwargs):
        raise AssertionError(f"importing {example} started a runtime")

    monkeypatch.setattr(tessera, "init", init)  # the compile checks import examples, never run them
    module = load(example)
    assert module.COMPILE_CHECKS, example
    for check in module.COMPILE_CHECKS:
        kernel = check["kernel"]
        # The signature names every argument, in order; constexprs give every constexpr a value.
        assert list(check["signature"]) == kernel.arg_names, (example, kernel.__name__)
        constexprs = {name for name, ty in check["signature"].items() if ty == "constexpr"}
        assert set(check["constexprs"]) == constexprs, (example, kernel.__name__)
