"""System-scope fences, which Triton has no operation for: inline assembly on GPUs (the
instructions C++ platform::fence compiles to), a locked read-modify-write under the
interpreter (x86 keeps stores in order; the RMW orders them with later loads too)."""

import triton
import triton.language as tl
from triton.language.target_info import is_hip, is_hip_cdna3, is_hip_cdna4

from . import _layout as L
from ._clock import INTERPRETED
from ._context import control_word


@triton.jit
def fence_system(ctx, ACQUIRE: tl.constexpr):
    """Every thread of the program: its earlier memory operations are ordered before its later
    ones as every agent of the system sees them (release; ACQUIRE: acq_rel). Starts with a
    barrier of the program's threads, so the fence covers what all of them wrote."""
    tl.debug_barrier()
    if INTERPRETED:
        tl.atomic_add(control_word(ctx, L.ABORT_WORD, tl.load(ctx + L.MY_PE)),
                      tl.cast(0, tl.uint64), sem="acq_rel", scope="sys")
    elif is_hip():
        if is_hip_cdna3() or is_hip_cdna4():
            if ACQUIRE:
                tl.inline_asm_elementwise(
                    "buffer_wbl2 sc0 sc1\n s_waitcnt vmcnt(0) lgkmcnt(0)\n buffer_inv sc0 sc1\n"
                    " v_mov_b32 $0, 0", "=v", [], dtype=tl.int32, is_pure=False, pack=1)
            else:
                tl.inline_asm_elementwise(
                    "buffer_wbl2 sc0 sc1\n s_waitcnt vmcnt(0) lgkmcnt(0)\n v_mov_b32 $0, 0",
                    "=v", [], dtype=tl.int32, is_pure=False, pack=1)
        else:
            if ACQUIRE:
                tl.inline_asm_elementwise(
                    "buffer_wbl2\n s_waitcnt vmcnt(0) lgkmcnt(0)\n buffer_invl2\n"
                    " buffer_wbinvl1_vol\n v_mov_b32 $0, 0", "=v", [], dtype=tl.int32,
                    is_pure=False, pack=1)
            else:
                tl.inline_asm_elementwise("buffer_wbl2\n s_waitcnt vmcnt(0) lgkmcnt(0)\n"
                                          " v_mov_b32 $0, 0", "=v", [], dtype=tl.int32,
                                          is_pure=False, pack=1)
    else:
        tl.inline_asm_elementwise("fence.acq_rel.sys;\n mov.u32 $0, 0;", "=r", [],
                                  dtype=tl.int32, is_pure=False, pack=1)
