"""docs/threat-model.md #7: answer the first three calls of a ModelNew honestly, then return the first
answer again (launching the kernel on a scratch buffer so a kernel launch is still seen).

The correctness trials call one instance at most three times (trial, re-run, fresh inputs), so
they pass; the timed loop keeps calling one instance with refilled inputs, so kept timed outputs
no longer match their inputs (stale_timed_output)."""

import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def add_kernel(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(a_ptr + offs, mask=mask) + tl.load(b_ptr + offs, mask=mask), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.memo = []

    def forward(self, a, b):
        out = torch.empty_like(a)
        add_kernel[(triton.cdiv(a.numel(), 1024),)](a, b, out, a.numel(), BLOCK=1024)
        if len(self.memo) >= 3:
            return self.memo[0]
        self.memo.append(out)
        return out
