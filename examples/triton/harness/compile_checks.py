"""The entries of an example's COMPILE_CHECKS, which tests/triton/compile_check.py compiles for
each GPU target: (kernel, signature, constexprs) as Triton's compiler takes them."""


def compile_check(kernel, constexprs, **types):
    """The entry for `kernel` (@triton.jit): its signature names every argument in the kernel's
    order, typed as in `types` ("*fp16", "i32", ...) or "constexpr" for those `constexprs` gives
    a value."""
    signature = {name: "constexpr" if name in constexprs else types[name] for name in kernel.arg_names}
    return dict(kernel=kernel, signature=signature, constexprs=constexprs)
