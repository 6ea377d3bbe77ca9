"""MoE dispatch and combine on torch tensors (bf16): tokens go to their top-k experts' PEs, each
expert scales its rows by (expert id + 1), combine brings them back weighted. Checked against
the same computation done locally in torch.

    tessera-run -np 4 python examples/python/moe_torch.py
"""

import sys

import torch

import tessera


def main():
    with tessera.init(heap_size="64M") as rt:
        tokens, hidden, topk, experts = 64, 128, 2, 2 * rt.n_pes
        g = torch.Generator().manual_seed(rt.pe)
        x = torch.randn((tokens, hidden), generator=g).bfloat16()
        idx = torch.stack([torch.randperm(experts, generator=g)[:topk] for _ in range(tokens)]).int()
        w = torch.rand((tokens, topk), generator=g)
        with tessera.ops.MoeBuffer(rt, max_tokens_per_pe=tokens, hidden=hidden, topk=topk,
                                   num_experts=experts, dtype="bfloat16") as moe:
            h = moe.dispatch(x, idx, w)
            rt.synchronize()
            ex = torch.from_dlpack(h.expert_x)
            offsets = torch.from_dlpack(h.expert_offsets)
            out = torch.zeros_like(ex)
            for i in range(moe.local_experts):
                lo, hi = int(offsets[i]), int(offsets[i + 1])
                out[lo:hi] = (ex[lo:hi].float() * (rt.pe * moe.local_experts + i + 1)).bfloat16()
            y = torch.empty_like(x)
            moe.combine(h, out, y)
            rt.synchronize()
            scaled = torch.stack([(x.float() * (idx[:, j:j + 1] + 1)).bfloat16().float() for j in range(topk)], 1)
            reference = (scaled * w[:, :, None]).sum(1)
            ok = torch.allclose(y.float(), reference, rtol=2e-2, atol=2e-2)
            rt.barrier()
        print(f"PE {rt.pe}: moe dispatch/combine of {tokens} bf16 tokens to {experts} experts: "
              f"{'ok' if ok else 'WRONG'}", flush=True)
        return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
