"""Every test in this folder is collective: each PE of the job runs the same pytest session, so
tests run in the same order everywhere. Each module gets its own Runtime (init at its first test,
finalize after its last), so a session also proves that runtimes can follow one another."""

import numpy as np
import pytest

import tessera


@pytest.fixture(scope="module")
def rt():
    runtime = tessera.init(heap_size="64M")
    yield runtime
    runtime.finalize()


@pytest.fixture
def rng(rt):
    """A generator seeded by PE, so every PE can rebuild every other PE's data."""
    return np.random.default_rng(1234 + rt.pe)


def rng_of(pe):
    return np.random.default_rng(1234 + pe)
