"""Compile checks without a GPU (issue 15, item 5): every function of tessera.triton (through
compile_kernels.py) and every kernel of examples/triton compiles for CUDA sm_90 / sm_80 and HIP
gfx942 / gfx90a, and the generated PTX / AMDGCN makes remote signals, waits and barrier arrivals
system-scope release / acquire operations. The checker is shown to fail: on a probe kernel's
gpu-scope and relaxed atomics, and on mutants of sync.py with the scope or the ordering weakened.

compile_check.py compiles everything once per session, in a child process without
TRITON_INTERPRET (Triton's persistent cache makes later sessions fast)."""

import hashlib
import json
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import compile_check as cc  # noqa: E402

PACKAGE = os.path.join(cc.REPO, "python", "tessera", "triton")
# TESSERA_COMPILE_TARGETS narrows the session to some targets (ctest: one entry per target).
TARGETS = cc.selected_targets()
MUTANT_TARGETS = [t for t in cc.MUTANT_TARGETS if t in TARGETS]


@pytest.fixture(scope="session")
def compiled(tmp_path_factory):
    # TESSERA_COMPILE_CHECK_DIR: reuse (or keep) the compiled output there, to look at it.
    reuse = os.environ.get("TESSERA_COMPILE_CHECK_DIR")
    if reuse and os.path.exists(os.path.join(reuse, "manifest.json")):
        manifest = json.load(open(os.path.join(reuse, "manifest.json")))
        manifest["dir"] = reuse
        return manifest
    out = reuse or tmp_path_factory.mktemp("compile_check")
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    # Triton's cache keys a kernel by its functions' source text, not their line numbers, so a
    # kernel cached before an edit that moved lines (a function unchanged below it) comes back
    # with the old line info, and the line-based checks here would miss its sites. One cache
    # directory per version of the package's and the examples' sources avoids that.
    if env.get("TRITON_CACHE_DIR"):
        env["TRITON_CACHE_DIR"] = os.path.join(env["TRITON_CACHE_DIR"],
                                               "compile-check-" + _sources_digest())
    run = subprocess.run([sys.executable, os.path.join(HERE, "compile_check.py"), str(out)],
                         env=env, capture_output=True, text=True, timeout=900)
    manifest_path = os.path.join(out, "manifest.json")
    assert os.path.exists(manifest_path), run.stdout[-3000:] + run.stderr[-3000:]
    manifest = json.load(open(manifest_path))
    manifest["dir"] = str(out)
    manifest["log"] = run.stderr[-3000:]
    return manifest


def _sources_digest():
    """A digest of every Python source a compiled kernel's line info can name."""
    digest = hashlib.sha256()
    for folder in (PACKAGE, cc.EXAMPLES, HERE):
        for name in sorted(os.listdir(folder)):
            if name.endswith(".py"):
                digest.update(name.encode())
                with open(os.path.join(folder, name), "rb") as f:
                    digest.update(f.read())
    return digest.hexdigest()[:16]


def _entries(compiled, target, origin=None):
    return [e for e in compiled["entries"]
            if e["target"] == target and (origin is None or e["origin"] == origin)]


def _asm(compiled, entry):
    with open(os.path.join(compiled["dir"], entry["asm"])) as f:
        return f.read()


def _promised_sites():
    """[(path, function, call, line, ordering)] of every call PROMISES names, from the source."""
    sites = []
    for (file, function, call), ordering in cc.PROMISES.items():
        path = os.path.join(PACKAGE, file)
        lines = cc.ordering_sites(path, function, call)
        assert lines, f"{file}: no tl.{call} in {function}() (renamed? update PROMISES)"
        sites.extend((path, function, call, line, ordering) for line in lines)
    return sites


def _check(ordering, instrs, target):
    return (cc.check_release if ordering == "release" else cc.check_acquire)(instrs, target)


@pytest.mark.parametrize("target", TARGETS)
def test_every_kernel_compiles(compiled, target):
    entries = _entries(compiled, target)
    failed = {e["name"]: e["error"] for e in entries if not e["ok"]}
    assert not failed, failed
    names = {e["name"] for e in entries}
    assert {"rma_calls", "atomic_calls", "sync_calls", "wait_calls", "one_element_calls",
            "float_atomic_calls", "barrier_call", "proxy_calls"} <= names
    assert sum(e["origin"] == "example" for e in entries) >= len(compiled["example_jit_functions"])
    print(f"{target}: {len(entries)} kernels compiled: {sorted(names)}")


def test_every_public_function_is_compiled():
    # compile_kernels.py must call each jit function tessera.triton exports.
    import ast

    import tessera.triton as tx
    tree = ast.parse(open(os.path.join(HERE, "compile_kernels.py")).read())
    called = {n.attr for n in ast.walk(tree)
              if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and
              n.value.id == "tx"}
    jit = {name for name in tx.__all__ if hasattr(getattr(tx, name), "fn")}
    assert jit, "tessera.triton exports no jit functions?"
    assert jit <= called, f"not compiled: {sorted(jit - called)}"


def test_every_example_kernel_is_compiled(compiled):
    # Every @triton.jit function of an example is a COMPILE_CHECKS kernel or called by one
    # (helpers inline into their callers, so they compile with them).
    compiled_names = {e["name"] for e in compiled["entries"] if e["origin"] == "example"}
    for module, names in compiled["example_jit_functions"].items():
        source = open(os.path.join(cc.EXAMPLES, module + ".py")).read()
        for name in names:
            if f"{module}.{name}" in compiled_names:
                continue
            assert source.count(f"{name}(") >= 2, (
                f"examples/triton/{module}.py: {name} is neither in COMPILE_CHECKS nor called")


@pytest.mark.parametrize("target", TARGETS)
def test_clock_is_the_targets_own(compiled, target):
    # Waits read %globaltimer on CUDA, s_memrealtime on HIP: the stand-in driver made
    # tessera.triton pick the branch of the target being compiled.
    (entry, ) = [e for e in _entries(compiled, target) if e["name"] == "sync_calls"]
    asm = _asm(compiled, entry)
    if cc.TARGETS[target][0] == "cuda":
        assert "%globaltimer" in asm and "s_memrealtime" not in asm
    else:
        assert "s_memrealtime" in asm and "%globaltimer" not in asm


@pytest.mark.parametrize("target", TARGETS)
def test_signals_waits_and_barrier_arrivals_are_system_scope(compiled, target):
    sites = _promised_sites()
    seen = set()
    bad = []
    for entry in _entries(compiled, target):
        if entry["origin"] not in ("library", "example"):
            continue
        instrs = cc.instructions(_asm(compiled, entry))
        for path, function, call, line, ordering in sites:
            at = cc.site_instructions(instrs, path, line)
            if not at:
                continue
            seen.add((function, call, line))
            ok, why = _check(ordering, at, target)
            if not ok:
                bad.append(f"{entry['name']}: {function}() tl.{call} line {line}: {why}")
    assert not bad, "\n".join(bad)
    missing = [(f, c, ln) for _, f, c, ln, _ in sites if (f, c, ln) not in seen]
    assert not missing, f"promised calls compiled nowhere on {target}: {missing}"


def _probe_instructions(compiled, target):
    (entry, ) = [e for e in _entries(compiled, target) if e["name"] == "probe"]
    instrs = cc.instructions(_asm(compiled, entry))
    path = os.path.join(compiled["dir"], "compile_check_probe.py")
    first = compiled["probe_first_line"]
    return [(call, sem, scope, cc.site_instructions(instrs, path, first + i))
            for i, (call, sem, scope) in enumerate(cc.PROBE_CALLS)]


@pytest.mark.parametrize("target", TARGETS)
def test_checker_accepts_sys_release_acquire_and_rejects_weaker(compiled, target):
    forms = []
    for call, sem, scope, at in _probe_instructions(compiled, target):
        ordering = "acquire" if call == "atomic_load" else "release"
        ok, why = _check(ordering, at, target)
        strong = scope == "sys" and sem != "relaxed"
        assert ok == strong, f"tl.{call}(sem={sem}, scope={scope}) on {target}: {why}"
        forms.append(f"  {call:12} {sem:8} {scope:3} -> {'accepted' if ok else 'rejected'}: {why}")
    print(f"{target}:\n" + "\n".join(forms))


@pytest.mark.parametrize("target", MUTANT_TARGETS)
@pytest.mark.parametrize("tag", list(cc.MUTATIONS))
def test_weakened_sync_py_is_rejected(compiled, target, tag):
    # sync.py with scope="sys" -> "gpu" (or release/acquire -> relaxed): every promised call of
    # signal, put_signal, wait_until and the barrier now fails the check.
    (entry, ) = [e for e in _entries(compiled, target, "mutant") if e["name"] == f"mutant_{tag}"]
    assert entry["ok"], entry.get("error")
    instrs = cc.instructions(_asm(compiled, entry))
    mutant = compiled["mutants"][tag]
    checked = 0
    for (file, function, call), ordering in cc.PROMISES.items():
        if file != "sync.py":
            continue
        for line in cc.ordering_sites(mutant, function, call):
            at = cc.site_instructions(instrs, mutant, line)
            assert at, f"{function}() tl.{call} line {line} not compiled in the mutant"
            ok, why = _check(ordering, at, target)
            assert not ok, f"mutant {tag}: {function}() line {line} still passes: {why}"
            checked += 1
    assert checked >= 7
