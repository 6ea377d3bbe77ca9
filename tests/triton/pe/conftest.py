"""Every test in this folder is collective: each PE of the job runs the same pytest session
(tessera-run -np 2/4, two pretend nodes, mpirun), so tests run in the same order everywhere.
Kernels run under Triton's interpreter (TRITON_INTERPRET=1) on the host backend: each PE's
process maps its node's heaps, and peers on other nodes are reached through the proxy ring.

Each module gets its own Runtime; after every test each PE's failure record must be empty
(tessera.triton.check), so a kernel that recorded a failure nobody expected fails its test."""

import numpy as np
import pytest
import torch
import triton

import tessera
import tessera.triton as tx

if not triton.knobs.runtime.interpret:
    pytest.skip("these tests run Triton kernels on the host backend: set TRITON_INTERPRET=1",
                allow_module_level=True)


@pytest.fixture(scope="module")
def rt():
    runtime = tessera.init(heap_size="32M")
    yield runtime
    runtime.finalize()


@pytest.fixture(scope="module")
def ctx(rt):
    """The module's runtime's context tensor (tessera.triton.context)."""
    return tx.context(rt)


@pytest.fixture(autouse=True)
def no_failure_left(rt):
    """Each test ends with this PE's failure record empty (check raises what it holds)."""
    yield
    tx.check(rt)


def neighbours(rt):
    """(right, left): the PE this one writes to and the one that writes to it."""
    return (rt.pe + 1) % rt.n_pes, (rt.pe + rt.n_pes - 1) % rt.n_pes


def mapped(rt, pe):
    """True when `pe`'s heap is load/store reachable from here (not only through the proxy)."""
    return rt.transport(pe) in ("self", "mapped")


def sym(rt, shape, dtype, fill=0):
    """A symmetric array filled with `fill` on every PE, and its torch view (no copy). Returns
    once every PE filled its copy."""
    a = rt.full(shape, fill, dtype)
    return a, torch.from_dlpack(a)


def rng_of(pe):
    """A generator seeded by PE, so every PE can rebuild every other PE's data."""
    return np.random.default_rng(4321 + pe)
