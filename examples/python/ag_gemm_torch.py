"""All-gather + GEMM on torch tensors: torch.ops.tessera.ag_gemm (through tessera.torch), checked
against torch.matmul of the gathered input, eagerly and inside torch.compile.

    tessera-run -np 4 python examples/python/ag_gemm_torch.py
"""

import sys

import torch

import tessera
import tessera.torch as tt


def main():
    with tessera.init(heap_size="64M") as rt:
        m, n_local, k = 64 * rt.n_pes, 128, 96
        # Every PE can rebuild every shard: seeded by PE.
        shards = [torch.randn((m // rt.n_pes, k), generator=torch.Generator().manual_seed(pe)).bfloat16()
                  for pe in range(rt.n_pes)]
        b = torch.randn((k, n_local), generator=torch.Generator().manual_seed(100 + rt.pe)).bfloat16()
        reference = torch.matmul(torch.cat(shards).float(), b.float())

        c = tt.ag_gemm(rt, shards[rt.pe], b)
        h = tt.handle(rt)  # custom ops take the runtime's handle, an int a graph can hold
        compiled = torch.compile(lambda a, w: torch.ops.tessera.ag_gemm(a, w, h), backend="eager",
                                 fullgraph=True)
        c2 = compiled(shards[rt.pe], b)
        ok = all(torch.allclose(x, reference, rtol=1e-3, atol=1e-3) for x in (c, c2))
        print(f"PE {rt.pe}: ag_gemm bf16 ({m} x {k}) @ ({k} x {n_local}) over {rt.n_pes} PEs: "
              f"{'ok' if ok else 'WRONG'}", flush=True)
        tt.release(rt)
        return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
