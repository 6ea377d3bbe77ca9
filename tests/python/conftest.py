"""The fixtures of the torch collective modules (test_collectives_torch.py, test_autograd_torch.py;
the other modules here define their own rt). Every PE of the job runs the same pytest session;
each module gets its own Runtime."""

import pytest

import tessera


@pytest.fixture(scope="module")
def rt():
    """This module's Runtime: made at its first test; after its last, tessera.torch's cached
    buffers of it are released, then it is finalized."""
    import tessera.torch as tt

    runtime = tessera.init(heap_size="64M")
    yield runtime
    tt.release(runtime)
    runtime.finalize()


@pytest.fixture(scope="module")
def mapped(rt):
    """Whether every PE's heap is mapped here (one node), the same answer on every PE."""
    from test_collectives import all_mapped

    return all_mapped(rt, rt.team_world())
