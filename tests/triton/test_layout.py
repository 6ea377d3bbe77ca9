"""tessera.triton's copy of the context, control-page and failure-record layout equals the C++
definition (device/flat_context.hpp, context.hpp, failure_record.hpp) as the binding exports it,
and the tensor rt.triton_context() makes follows it."""

import numpy as np
import pytest

import tessera
from tessera.triton import _layout as L


def test_layout_equals_the_cpp_definition():
    assert L.LAYOUT == tessera.TRITON_CONTEXT_WORDS


def test_constexprs_follow_the_dicts():
    assert L.HEAP_BASES.value == L.CONTEXT_WORDS["heap_bases"]
    assert L.ABORT_WORD.value == L.CONTROL_WORDS["abort_word"]
    assert L.REC_ARGS.value == L.FAILURE_WORDS["args"]
    assert L.KIND_OUTSIDE_HEAP.value == L.FAILURE_KINDS["outside_heap"]
    assert L.KIND_PROXY_FAILED.value == L.FAILURE_KINDS["proxy_failed"]
    assert L.OP_QUIET.value == L.FAILURE_OPS["quiet"]
    assert L.ROLE_SIGNAL.value == L.FAILURE_ROLES["signal"]
    assert L.OP_TEST_SOME.value == L.FAILURE_OPS["test_some"] == len(L.FAILURE_OPS) - 1
    assert L.ROLE_SIGNALS.value == L.FAILURE_ROLES["signals"]
    assert L.TEAM_BARRIER_WORDS.value == L.TEAM_WORDS["barrier_words"]
    assert L.KIND_TEAM_BARRIER_TIMEOUT.value == L.FAILURE_KINDS["team_barrier_timeout"]
    assert (L.EQ.value, L.LE.value, L.SET.value, L.ADD.value) == (0, 5, 0, 1)


def test_one_pe_context_holds_the_runtime_values():
    rt = tessera.init(heap_size="8M", timeout=7)
    try:
        ctx = rt.triton_context()
        w = L.CONTEXT_WORDS
        n = rt.n_pes
        assert ctx.dtype.is_floating_point is False and ctx.numel() == 16 + 2 * n
        assert ctx[w["my_pe"]].item() == rt.pe and ctx[w["n_pes"]].item() == n
        assert ctx[w["heap_size"]].item() == rt.heap_size
        assert ctx[w["timeout_ns"]].item() == 7 * 10**9
        bases = np.from_dlpack(rt.heap_bases()).astype(np.int64)
        assert np.array_equal(ctx[w["heap_bases"]:w["heap_bases"] + n].numpy(), bases)
        control = ctx[w["control_page"]].item()
        assert control >= bases[rt.pe] + rt.heap_size
        assert ctx[w["failure_record"]].item() == control + 8 * L.CONTROL_WORDS["failure_record"]
        # The control pages follow the heap bases; this PE's is its control page. On the host
        # backend it lies control_offset past the heap's start (2 MiB past its 4 KiB-rounded
        # end); descriptors name it by that offset.
        assert ctx[w["heap_bases"] + n + rt.pe].item() == control
        assert ctx[w["control_offset"]].item() == control - bases[rt.pe]
        assert ctx[w["control_offset"]].item() >= rt.heap_size + (2 << 20)
    finally:
        rt.finalize()
