"""The problem gemm_all_scatter.py and producer_consumer.py both solve, on different schedules:
C = A @ [B_0 ... B_{P-1}] with A on every PE and column block B_p on PE p; PE p computes C's
column block p, and every PE ends with the whole C."""

import torch

from .run import seeded


def column_block_problem(rt, m, k, n_local):
    """A (m x k) and the column blocks B_p (k x n_local each), fp16 on the CPU and seeded, so
    every PE builds them all alike; C (m x n_pes * n_local, fp32) zeroed on the symmetric heap
    (collective; tessera.torch.free it): (a, blocks, c)."""
    import tessera.torch as tt

    a, blocks = seeded((m, k), 7), [seeded((k, n_local), 100 + p) for p in range(rt.n_pes)]
    return a, blocks, tt.zeros(rt, (m, rt.n_pes * n_local), dtype=torch.float32)


def column_block_product_ok(c, a, blocks):
    """Whether c (any device) is A @ [B_0 ... B_{P-1}] in fp32 (within fp16 inputs' tolerance)."""
    reference = a.float() @ torch.cat(blocks, dim=1).float()
    return torch.allclose(c.cpu(), reference, rtol=1e-3, atol=1e-3)
