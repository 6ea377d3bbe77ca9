"""What every Triton example does around its kernels, on each PE: start the runtime, wait for
the kernels and raise what they recorded, print the PE's one verification line, free and end."""

import sys

import torch

import tessera.triton as tx


def start(heap_size="64M"):
    """This PE's runtime (collective: tessera.init), its Triton context tensor (pass it to the
    kernels) and the device that tensor is on: (rt, ctx, device)."""
    import tessera

    rt = tessera.init(heap_size=heap_size)
    ctx = rt.triton_context()
    return rt, ctx, ctx.device


def seeded(shape, seed, scale=1.0):
    """A random fp16 tensor of `shape` (normal, times `scale`) on the CPU that every PE rebuilds
    alike from `seed`: any PE can compute any PE's input, and so the reference."""
    return (torch.randn(shape, generator=torch.Generator().manual_seed(seed)) * scale).half()


def wait_for_kernels(rt, device):
    """Returns once this PE's kernels completed (on a GPU after a device synchronize; the
    interpreter's launches return complete) and none recorded a failure (tx.check raises it)."""
    if device.type != "cpu":
        torch.cuda.synchronize()
    tx.check(rt)


def say(line):
    """Prints `line` in one write: every PE prints into the launcher's one pipe."""
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def report(rt, what, ok):
    """Prints this PE's verification line, "PE <pe>: <what>: ok" (or WRONG)."""
    say(f"PE {rt.pe}: {what}: {'ok' if ok else 'WRONG'}")


def end(rt, ok, *heap_tensors):
    """Collective: frees `heap_tensors` (made by tessera.torch.zeros or empty) in order and
    ends the runtime; the example's exit status, 0 when its check passed."""
    import tessera.torch as tt

    for t in heap_tensors:
        tt.free(t)
    rt.finalize()
    return 0 if ok else 1
