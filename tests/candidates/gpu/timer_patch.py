"""docs/threat-model.md #6: replace the CUDA event timer so every iteration reads as 1 ns.

Rejected statically (assignment to a torch attribute); with static checks off, the worker's
snapshot of judge functions sees the replacement after the first call (judge_patched)."""

import torch
import triton
import triton.language as tl
from torch import nn

torch.cuda.Event.elapsed_time = lambda self, end: 1e-6


@triton.jit
def add_kernel(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(a_ptr + offs, mask=mask) + tl.load(b_ptr + offs, mask=mask), mask=mask)


class ModelNew(nn.Module):
    def forward(self, a, b):
        out = torch.empty_like(a)
        add_kernel[(triton.cdiv(a.numel(), 1024),)](a, b, out, a.numel(), BLOCK=1024)
        return out
