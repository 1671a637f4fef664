"""A forward that reads device data on the host (``.item()``) before it launches: its launches
could depend on the data, which a plan recorded on other inputs cannot reproduce, so the GPU
judge says it is not replayable (a runtime error with the reason) rather than trusting the
worker's outputs."""

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
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        out = torch.empty_like(a)
        n = out.numel()
        block = 1024 if a.reshape(-1)[0].item() > 0 else 2048
        add_kernel[(triton.cdiv(n, block),)](a, b, out, n, BLOCK=block)
        return out
