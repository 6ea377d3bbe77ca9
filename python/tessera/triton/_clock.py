"""Time and pacing for bounded waits, on every target tessera.triton runs on.

Under Triton's interpreter (TRITON_INTERPRET=1) a kernel body runs as Python, so the clock is
the host's monotonic clock and a spin yields the CPU to the other PEs' processes (which share
few cores). Compiled for CUDA the clock is %globaltimer (ns); for HIP s_memrealtime, which
counts at 100 MHz on MI200/MI300 (x10 ns)."""

import os
import time

import triton
import triton.language as tl
from triton.language.target_info import is_hip

# triton.jit reads the same knob when it decides to interpret, so both agree.
INTERPRETED = tl.constexpr(bool(triton.knobs.runtime.interpret))


def _host_now_ns():
    return time.monotonic_ns()


def _host_yield():
    os.sched_yield()
    return 0


# Jit code may only name jit functions and builtins; these two run only in the interpreter (the
# compiler never visits an `if INTERPRETED:` branch when compiling).
_host_now_ns.__triton_builtin__ = True
_host_yield.__triton_builtin__ = True

# s_memrealtime ticks per ns on MI200/MI300 (100 MHz).
_HIP_NS_PER_TICK = tl.constexpr(10)


@triton.jit
def now_ns():
    """Nanoseconds on a monotonic clock (int64 scalar); only differences mean anything."""
    if INTERPRETED:
        t = tl.cast(_host_now_ns(), tl.int64)
    elif is_hip():
        t = tl.inline_asm_elementwise("s_memrealtime $0\n s_waitcnt lgkmcnt(0)", "=s", [],
                                      dtype=tl.int64, is_pure=False, pack=1) * _HIP_NS_PER_TICK
    else:
        t = tl.extra.cuda.globaltimer()
    return t


@triton.jit
def spin_pause():
    """One turn of a spin: lets the writer run where PEs share cores (interpreter); nothing on
    a GPU, where the writer runs on other hardware."""
    if INTERPRETED:
        _host_yield()
