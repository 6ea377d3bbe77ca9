"""Compile checks without a GPU: tessera.triton's functions (through compile_kernels.py) and every
kernel of examples/triton (their COMPILE_CHECKS) compiled for CUDA sm_90 / sm_80 and HIP
gfx942 / gfx90a by Triton's own compiler, and the generated PTX / AMDGCN read back to check that
remote signals, waits and barrier arrivals are system-scope release / acquire operations.

Two halves:
- compiling (run as a script: `python compile_check.py OUT_DIR`): writes OUT_DIR/manifest.json
  and one .asm file per kernel and target. It must run without TRITON_INTERPRET (the compiler,
  not the interpreter), so test_compile.py runs it once per session in a child process. Triton
  picks the CUDA or HIP branches of tessera.triton (its clock, its fences) with
  triton.language.target_info, which asks the active driver for the current target; without a
  GPU there is no driver, so a stand-in that reports the target being compiled is installed.
- reading (imported by the test): `instructions` attributes every instruction to the source line
  it came from (the `.loc` line info both backends emit), `ordering_sites` finds the atomic calls
  whose ordering the library promises, and `check_release` / `check_acquire` decide whether the
  instructions of one such call are a system-scope release / acquire on the target.

The instruction forms (Triton 3.9; per call site of the probe kernel below):
  sm_90  release atomic: atom.global.sys.release.{exch,add}; release store: fence.release.sys +
         st.relaxed.sys.global; acquire load: ld.relaxed.sys.global + fence.acquire.sys
  sm_80  the same, with fence.acq_rel.sys in place of fence.release.sys / fence.acquire.sys
  gfx942 release: buffer_wbl2 sc0 sc1, s_waitcnt vmcnt(0), then global_atomic_* / global_store_*
         with sc0 sc1 (sc1 alone for an atomic without result); acquire: global_load_* sc0 sc1,
         s_waitcnt vmcnt(0), buffer_inv sc0 sc1. Agent (scope="gpu"): sc1 without sc0.
  gfx90a release: buffer_wbl2, s_waitcnt vmcnt(0), then the access; acquire: global_load_* glc,
         s_waitcnt vmcnt(0), buffer_invl2, buffer_wbinvl1_vol. Agent scope: no buffer_wbl2 /
         buffer_invl2 (only buffer_wbinvl1_vol)."""

import ast
import functools
import importlib.util
import json
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
EXAMPLES = os.path.join(REPO, "examples", "triton")

# name -> (backend, arch, warp size), as triton.backends.compiler.GPUTarget takes them.
TARGETS = {
    "sm_90": ("cuda", 90, 32),
    "gfx942": ("hip", "gfx942", 64),
    "sm_80": ("cuda", 80, 32),
    "gfx90a": ("hip", "gfx90a", 64),
}

# The calls whose ordering tessera.triton promises (docs/triton.md): (module file, function,
# tl call) -> "release" or "acquire". Every atomic of that kind in that function must lower to a
# system-scope operation with that ordering on every target. (The barrier's `entered` counter
# and its barrier_seen note are deliberately relaxed, so only the arrival's atomic_add and the
# wait's atomic_load are listed for the barrier.)
PROMISES = {
    ("sync.py", "signal", "atomic_xchg"): "release",
    ("sync.py", "signal", "atomic_add"): "release",
    ("sync.py", "put_signal", "atomic_xchg"): "release",
    ("sync.py", "put_signal", "atomic_add"): "release",
    ("sync.py", "wait_until", "atomic_load"): "acquire",
    ("sync.py", "_read_signals", "atomic_load"): "acquire",
    ("sync.py", "_arrive", "atomic_add"): "release",
    ("sync.py", "_await_arrivals", "atomic_load"): "acquire",
    ("_proxy.py", "proxy_push", "atomic_store"): "release",
    ("_proxy.py", "proxy_collect", "atomic_store"): "release",
    ("_proxy.py", "_ring_wait", "atomic_load"): "acquire",
    ("_proxy.py", "proxy_quiet", "atomic_load"): "acquire",
    ("_failure.py", "record", "atomic_xchg"): "release",
}

# Mutants of sync.py that must be rejected: the same source with one ordering weakened.
MUTATIONS = {
    "scope_gpu": [('scope="sys"', 'scope="gpu"')],
    "sem_relaxed": [('sem="release"', 'sem="relaxed"'), ('sem="acquire"', 'sem="relaxed"')],
}
# The mutants are compiled for the two main targets (the probe shows every target's weak forms
# rejected; the mutants show that the checks of the library's own calls would catch them).
MUTANT_TARGETS = ("sm_90", "gfx942")
# Appended to a mutant (its line numbers stay those of sync.py): calls the mutated functions.
_MUTANT_CALLS = '''

@triton.jit
def compile_check_calls(ctx, dst, src, sig, out, pe, team, R: tl.constexpr, C: tl.constexpr):
    r = tl.arange(0, R)[:, None]
    c = tl.arange(0, C)[None, :]
    signal(sig, 1, L.SET, pe, ctx)
    signal(sig + 1, 2, L.ADD, pe, ctx)
    put_signal(dst + r * C + c, src + r * C + c, sig + 2, 1, L.SET, pe, ctx)
    put_signal(dst + r * C + c, src + r * C + c, sig + 3, 1, L.ADD, pe, ctx)
    tl.store(out, wait_until(sig, L.EQ, 1, ctx))
    i = tl.arange(0, C)
    tl.store(out + 1, test_any(sig + i, L.GE, 1, ctx))
    tl.store(out + 2, wait_until_some(sig + i, sig + C + i, sig + 2 * C + i, L.GE, 1, ctx))
    barrier(ctx)
    barrier(ctx, team)
'''
_MUTANT_SIGNATURE = {"ctx": "*i64", "dst": "*fp32", "src": "*fp32", "sig": "*u64", "out": "*u64",
                     "pe": "i32", "team": "*i64", "R": "constexpr", "C": "constexpr"}

# The probe: one call per line, each ordering and scope, so the forms above can be read off and
# the checker shown to reject the weak ones. Line -> (call, sem, scope) is PROBE_CALLS.
PROBE_CALLS = [
    ("atomic_xchg", "release", "sys"),
    ("atomic_add", "release", "sys"),
    ("atomic_store", "release", "sys"),
    ("atomic_load", "acquire", "sys"),
    ("atomic_cas", "acq_rel", "sys"),
    ("atomic_add", "acq_rel", "sys"),
    ("atomic_xchg", "release", "gpu"),
    ("atomic_add", "release", "gpu"),
    ("atomic_store", "release", "gpu"),
    ("atomic_load", "acquire", "gpu"),
    ("atomic_xchg", "relaxed", "sys"),
    ("atomic_add", "relaxed", "sys"),
    ("atomic_store", "relaxed", "sys"),
    ("atomic_load", "relaxed", "sys"),
]


def _probe_source():
    lines = ["import triton", "import triton.language as tl", "", "", "@triton.jit",
             "def probe(p, out):", '    """compile_check_probe.py: one ordering per line."""',
             "    acc = tl.cast(0, tl.uint64)"]
    first = len(lines) + 1
    for i, (call, sem, scope) in enumerate(PROBE_CALLS):
        ptr = f"p + {i}"
        one = "tl.cast(1, tl.uint64)"
        if call == "atomic_store":
            lines.append(f'    tl.atomic_store({ptr}, {one}, sem="{sem}", scope="{scope}")')
        elif call == "atomic_load":
            lines.append(f'    acc += tl.atomic_load({ptr}, sem="{sem}", scope="{scope}")')
        elif call == "atomic_cas":
            lines.append(f'    acc += tl.atomic_cas({ptr}, tl.cast(0, tl.uint64), {one}, '
                         f'sem="{sem}", scope="{scope}")')
        else:
            lines.append(f'    acc += tl.{call}({ptr}, {one}, sem="{sem}", scope="{scope}")')
    lines.append("    tl.store(out, acc)")
    return "\n".join(lines) + "\n", first


# ----------------------------------------------------------------------------- reading

_LOC = re.compile(r"^\s*\.loc\s+(\d+)\s+(\d+)\s+(\d+)(.*)$")
_FILE_PTX = re.compile(r'^\s*\.file\s+(\d+)\s+"([^"]+)"\s*(?:,.*)?$')
_FILE_GCN = re.compile(r'^\s*\.file\s+(\d+)\s+"([^"]*)"\s+"([^"]+)"')


def _caller(rest, files):
    """(path, line) of the call a `.loc` was inlined at, from what follows its line and column
    (PTX: `, inlined_at FILE LINE COL`; AMDGCN's comment: `@[ name.py:LINE:COL ...`), or None.
    AMDGCN names only the file's base name: it is looked up among the `.file`s."""
    m = re.search(r"inlined_at\s+(\d+)\s+(\d+)", rest)
    if m:
        return files.get(m.group(1)), int(m.group(2))
    m = re.search(r"@\[\s*([^\s:]+):(\d+):", rest)
    if m:
        for path in files.values():
            if os.path.basename(path) == m.group(1):
                return path, int(m.group(2))
    return None


@functools.lru_cache(maxsize=None)
def memory_lines(path):
    """{line: kinds of access} for the tl.load / tl.store / tl.atomic_* calls of source file
    `path`; kinds "load" (tl.load, atomic_load), "store" (tl.store, atomic_store), "rmw" (the
    other atomics)."""
    try:
        tree = ast.parse(open(path).read())
    except (OSError, SyntaxError, ValueError):
        return {}
    lines = {}
    for n in ast.walk(tree):
        if (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and
                isinstance(n.func.value, ast.Name) and n.func.value.id == "tl"):
            kind = {"load": "load", "atomic_load": "load", "store": "store",
                    "atomic_store": "store"}.get(n.func.attr)
            if kind is None and n.func.attr.startswith("atomic_"):
                kind = "rmw"
            if kind:
                lines.setdefault(n.lineno, set()).add(kind)
    return lines


def _access_kind(s):
    """"load", "store" or "rmw" for a global-memory access instruction, else None."""
    tokens = _ptx_memory_op(s)
    if tokens:
        return "load" if "ld" in tokens else "store" if "st" in tokens else "rmw"
    gcn = _gcn_memory_op(s)
    if gcn:
        return "load" if "_load" in gcn[0] else "store" if "_store" in gcn[0] else "rmw"
    return None


def instructions(asm):
    """[(source path, line, instruction)] in program order: every instruction of `asm` (PTX or
    AMDGCN) with the source line its `.loc` names (the innermost, for inlined calls).

    The AMDGPU backend sometimes leaves the access of a call under the `.loc` of a neighbouring
    line of the same inlined function (one without any memory call; e.g. the block an atomic's
    single-lane branch creates, or the address computation feeding it), while the call's own
    line keeps only the barrier before it, or nothing. A run of instructions with a memory access
    on a line that holds no memory call is therefore given to the line it was inlined at when
    that line holds a memory call (the access's address came from a call on it), else to the
    most recent line that holds a memory call but had no access yet."""
    files = {}
    for text in asm.splitlines():
        m = _FILE_GCN.match(text)
        if m:
            files[m.group(1)] = os.path.join(m.group(2), m.group(3))
            continue
        m = _FILE_PTX.match(text)
        if m:
            files[m.group(1)] = m.group(2)
    raw = []
    where = (None, 0, "")
    for text in asm.splitlines():
        m = _LOC.match(text)
        if m:
            where = (files.get(m.group(1)), int(m.group(2)), _caller(m.group(4), files))
            continue
        if text.lstrip().startswith(("//", ";")):
            continue
        s = text.split("//")[0].split(";")[0].strip()
        if not s or s.startswith(".") or s.endswith(":") or s in ("{", "}"):
            continue
        raw.append((where, s))
    # Runs of one location, then the re-attribution described above.
    runs = []
    for where, s in raw:
        if runs and runs[-1][0] == where:
            runs[-1][1].append(s)
        else:
            runs.append((where, [s]))
    pending = []  # memory-call lines seen without their access, most recent last
    out = []
    for (path, line, caller), body in runs:
        kinds = {_access_kind(s) for s in body} - {None}
        own = memory_lines(path) if path is not None else {}
        if line in own:
            if own[line] & kinds:
                pending = [p for p in pending if p != (path, line)]
            else:
                pending.append((path, line))
        elif kinds:
            at_caller = memory_lines(caller[0]).get(caller[1], set()) if caller and caller[0] \
                else set()
            if at_caller & kinds:
                # Inlined from a memory call's own line (its address computation): that call's.
                path, line = caller
                pending = [p for p in pending if p != caller]
            else:
                for k in range(len(pending) - 1, -1, -1):
                    p = pending[k]
                    if memory_lines(p[0])[p[1]] & kinds:
                        path, line = pending.pop(k)
                        break
        out.extend((path, line, s) for s in body)
    return out


def _ptx_memory_op(s):
    """The dotted tokens of a global-memory access in PTX (ld/st/atom/red .global), else None."""
    body = re.sub(r"^@!?%\w+\s+", "", s)
    opcode = body.split()[0] if body.split() else ""
    parts = opcode.split(".")
    if parts[0] in ("ld", "st", "atom", "red") and "global" in parts:
        return set(parts)
    return None


def _gcn_memory_op(s):
    opcode = s.split()[0] if s.split() else ""
    if re.match(r"^(global|flat|buffer)_(load|store|atomic)", opcode):
        return opcode, set(s.replace(",", " ").split())
    return None


def _accesses(instrs, backend):
    """Splits the instructions of one call site at its global-memory accesses: [(before, access,
    after)], `before` / `after` the site's instructions since the previous / until the next."""
    marks = [i for i, s in enumerate(instrs)
             if (_ptx_memory_op(s) if backend == "cuda" else _gcn_memory_op(s))]
    out = []
    for k, i in enumerate(marks):
        lo = marks[k - 1] + 1 if k > 0 else 0
        hi = marks[k + 1] if k + 1 < len(marks) else len(instrs)
        out.append((instrs[lo:i], instrs[i], instrs[i + 1:hi]))
    return out


def _cuda_fence(s, kinds):
    m = re.match(r"^fence\.(\w+)\.(\w+)", s)
    return bool(m) and m.group(1) in kinds and m.group(2) == "sys"


def check_release(instrs, target):
    """(ok, why) for the instructions of one call site that must be a system-scope release: every
    global access in it is, and there is at least one."""
    backend = TARGETS[target][0]
    accesses = _accesses(instrs, backend)
    if not accesses:
        return False, "no global memory access at this line"
    for before, access, _ in accesses:
        if backend == "cuda":
            tokens = _ptx_memory_op(access)
            if "sys" not in tokens:
                return False, f"not system scope: {access}"
            if not (tokens & {"release", "acq_rel"} or
                    any(_cuda_fence(s, ("release", "acq_rel", "sc")) for s in before)):
                return False, f"no release: {access} (before it: {before})"
        elif target == "gfx942":
            wbl2 = [s for s in before if s.startswith("buffer_wbl2")]
            if not any({"sc0", "sc1"} <= set(s.split()) for s in wbl2):
                return False, f"no system-scope writeback (buffer_wbl2 sc0 sc1) before {access}"
            if "sc1" not in _gcn_memory_op(access)[1]:
                return False, f"access not at system scope (sc1): {access}"
        else:
            if not any(s.split()[0] == "buffer_wbl2" for s in before):
                return False, f"no system-scope writeback (buffer_wbl2) before {access}"
        if backend == "hip" and not any(s.startswith("s_waitcnt") and "vmcnt(0)" in s
                                        for s in before):
            return False, f"earlier accesses not waited for (s_waitcnt vmcnt(0)) before {access}"
    return True, "; ".join(a for _, a, _ in accesses)


def check_acquire(instrs, target):
    """(ok, why) for the instructions of one call site that must be a system-scope acquire load:
    every global load in it is one, and there is at least one."""
    backend = TARGETS[target][0]
    accesses = _accesses(instrs, backend)
    if not accesses:
        return False, "no global memory access at this line"
    for _, access, after in accesses:
        if backend == "cuda":
            tokens = _ptx_memory_op(access)
            if "sys" not in tokens:
                return False, f"not system scope: {access}"
            if not ("acquire" in tokens or
                    any(_cuda_fence(s, ("acquire", "acq_rel", "sc")) for s in after)):
                return False, f"no acquire: {access} (after it: {after})"
        elif target == "gfx942":
            if not {"sc0", "sc1"} <= _gcn_memory_op(access)[1]:
                return False, f"load not at system scope (sc0 sc1): {access}"
            if not any(s.startswith("buffer_inv") and {"sc0", "sc1"} <= set(s.split())
                       for s in after):
                return False, f"no system-scope invalidate (buffer_inv sc0 sc1) after {access}"
        else:
            if not any(s.split()[0] == "buffer_invl2" for s in after):
                return False, f"no system-scope invalidate (buffer_invl2) after {access}"
    return True, "; ".join(a for _, a, _ in accesses)


def _file_key(path):
    """A source file by its name alone: the line info of a kernel compiled from another copy of
    the same source (the package seen through build/python, or Triton's cache answering with a
    kernel compiled from an earlier output directory) names a different directory. The names
    involved (sync.py, _proxy.py, compile_check_probe.py, sync_<mutation>.py, ...) are unique
    among a kernel's files."""
    return os.path.basename(path)


def site_instructions(all_instrs, path, line):
    """The instructions of `all_instrs` (from instructions()) that come from `path`:`line`."""
    key = _file_key(path)
    return [s for p, ln, s in all_instrs if ln == line and p is not None and _file_key(p) == key]


def ordering_sites(path, function, call):
    """Line numbers of the calls tl.<call>(...) inside function `function` of file `path` (any
    sem/scope: the checks decide what they compile to)."""
    tree = ast.parse(open(path).read())
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == function:
            for sub in ast.walk(node):
                if (isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) and
                        sub.func.attr == call and isinstance(sub.func.value, ast.Name) and
                        sub.func.value.id == "tl"):
                    lines.append(sub.lineno)
    return sorted(lines)


# ----------------------------------------------------------------------------- compiling

class StandInDriver:
    """What triton.language.target_info asks the active driver for: the target being compiled
    (is_hip(), is_cuda(), cuda_capability_geq, is_hip_cdna3() read it)."""

    def __init__(self, target):
        self.target = target

    def get_current_target(self):
        return self.target


def _load_module(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _example_modules():
    names = sorted(f[:-3] for f in os.listdir(EXAMPLES) if f.endswith(".py"))
    return [(n, _load_module("compile_check_example_" + n, os.path.join(EXAMPLES, n + ".py")))
            for n in names]


def selected_targets():
    """The TARGETS names TESSERA_COMPILE_TARGETS lists (comma-separated), or all of them."""
    names = [n for n in os.environ.get("TESSERA_COMPILE_TARGETS", "").split(",") if n]
    unknown = [n for n in names if n not in TARGETS]
    if unknown:
        raise SystemExit(f"TESSERA_COMPILE_TARGETS: unknown target(s) {unknown}; "
                         f"known: {sorted(TARGETS)}")
    return [n for n in TARGETS if n in names] if names else list(TARGETS)


def _mutant_path(out_dir, tag):
    return os.path.join(out_dir, "mutants", f"sync_{tag}.py")


def prepare(out_dir):
    """Writes the probe kernel and the mutants of sync.py under out_dir (once, before the
    workers load them)."""
    sync_path = os.path.join(REPO, "python", "tessera", "triton", "sync.py")
    source = open(sync_path).read()
    os.makedirs(os.path.join(out_dir, "mutants"), exist_ok=True)
    for tag, swaps in MUTATIONS.items():
        text = source
        for old, new in swaps:
            assert old in text, f"mutation {tag}: {old!r} is no longer in sync.py"
            text = text.replace(old, new)
        with open(_mutant_path(out_dir, tag), "w") as f:
            f.write(text + _MUTANT_CALLS)
    with open(os.path.join(out_dir, "compile_check_probe.py"), "w") as f:
        f.write(_probe_source()[0])


def jobs(out_dir, target_name):
    """Every kernel to compile for `target_name`: [(name, origin, kernel, signature,
    constexprs)]."""
    return [j for j in _all_jobs(out_dir) if j[1] != "mutant" or target_name in MUTANT_TARGETS]


@functools.lru_cache(maxsize=None)
def _all_jobs(out_dir):
    sys.path.insert(0, HERE)
    import compile_kernels

    out = []
    for name, spec in compile_kernels.KERNELS.items():
        out.append((name, "library", spec["kernel"], spec["signature"], spec["constexprs"]))
    for module_name, module in _example_modules():
        for spec in module.COMPILE_CHECKS:
            out.append((f"{module_name}.{spec['kernel'].__name__}", "example", spec["kernel"],
                        spec["signature"], spec["constexprs"]))
    probe_path = os.path.join(out_dir, "compile_check_probe.py")
    probe = _load_module("compile_check_probe", probe_path).probe
    out.append(("probe", "probe", probe, {"p": "*u64", "out": "*u64"}, {}))
    for tag in MUTATIONS:
        # A module of the package, so its relative imports resolve to tessera.triton's.
        module = _load_module(f"tessera.triton._compile_check_{tag}", _mutant_path(out_dir, tag))
        out.append((f"mutant_{tag}", "mutant", module.compile_check_calls, _MUTANT_SIGNATURE,
                    {"R": 4, "C": 16}))
    return out


def example_jit_functions():
    """{example module: names of the @triton.jit functions it defines}."""
    import triton
    found = {}
    for module_name, module in _example_modules():
        found[module_name] = sorted(
            n for n, v in vars(module).items()
            if isinstance(v, triton.runtime.jit.JITFunction) and v.fn.__module__ == module.__name__)
    return found


def compile_for(targets, out_dir):
    """Compiles every job for `targets`; returns the manifest entries."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    entries = []
    for target_name in targets:
        work = jobs(out_dir, target_name)
        target = GPUTarget(*TARGETS[target_name])
        triton.runtime.driver.set_active(StandInDriver(target))
        for name, origin, kernel, signature, constexprs in work:
            start = time.monotonic()
            entry = dict(name=name, origin=origin, target=target_name)
            try:
                compiled = triton.compile(
                    ASTSource(fn=kernel, signature=signature, constexprs=constexprs),
                    target=target)
                asm = compiled.asm.get("ptx") or compiled.asm.get("amdgcn")
                asm_file = f"{name}.{target_name}.asm"
                with open(os.path.join(out_dir, asm_file), "w") as f:
                    f.write(asm)
                entry.update(ok=True, asm=asm_file)
            except Exception as e:  # reported per kernel by the test
                entry.update(ok=False, error=f"{type(e).__name__}: {e}"[-4000:])
            entry["seconds"] = round(time.monotonic() - start, 2)
            entries.append(entry)
    return entries


def main(argv):
    out_dir = os.path.abspath(argv[1])
    os.makedirs(out_dir, exist_ok=True)
    if len(argv) > 2:  # a worker: its share of the targets
        targets = argv[2].split(",")
        entries = compile_for(targets, out_dir)
        with open(os.path.join(out_dir, f"part.{argv[2]}.json"), "w") as f:
            json.dump(entries, f)
        return 0
    prepare(out_dir)
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    # TESSERA_COMPILE_TARGETS (comma-separated names of TARGETS): only those, in one worker (ctest
    # runs one entry per target, side by side). Without it every target, in two workers (the CUDA
    # and the HIP target of each generation): one core each.
    chosen = selected_targets()
    if len(chosen) < len(TARGETS):
        groups = [",".join(chosen)]
    else:
        groups = ["sm_90,gfx90a", "gfx942,sm_80"]
    start = time.monotonic()
    workers = [subprocess.Popen([sys.executable, os.path.abspath(__file__), out_dir, g], env=env)
               for g in groups]
    codes = [w.wait() for w in workers]
    entries = []
    for g in groups:
        path = os.path.join(out_dir, f"part.{g}.json")
        if os.path.exists(path):
            entries.extend(json.load(open(path)))
    manifest = dict(entries=entries, worker_exit_codes=codes,
                    seconds=round(time.monotonic() - start, 1),
                    example_jit_functions=example_jit_functions(),
                    probe_first_line=_probe_source()[1],
                    mutants={tag: _mutant_path(out_dir, tag) for tag in MUTATIONS})
    with open(os.path.join(out_dir, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    return 0 if all(c == 0 for c in codes) else 1


if __name__ == "__main__":
    os.environ.pop("TRITON_INTERPRET", None)
    sys.exit(main(sys.argv))
