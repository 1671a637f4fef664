"""Expert Triton solution for ``vector_add_fp32``: ``out = a + b`` on float32 ``[N]`` vectors.

One program streams ``BLOCK`` elements (16 per thread at 8 warps, four 128-bit accesses); the
tail block is masked. Strides are passed so non-contiguous views work; a unit stride is
specialised by Triton, keeping the loads vectorised.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl
from torch import nn

BLOCK = 4096
NUM_WARPS = 8


@triton.jit
def _add_kernel(a_ptr, b_ptr, out_ptr, n, stride_a, stride_b, BLOCK: tl.constexpr):
    start = tl.program_id(0).to(tl.int64) * BLOCK
    offs = start + tl.arange(0, BLOCK)  # [BLOCK]
    mask = offs < n
    a = tl.load(a_ptr + offs * stride_a, mask=mask)
    b = tl.load(b_ptr + offs * stride_b, mask=mask)
    tl.store(out_ptr + offs, a + b, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        n = a.numel()
        out = torch.empty((n,), dtype=a.dtype, device=a.device)
        grid = (triton.cdiv(n, BLOCK),)
        _add_kernel[grid](a, b, out, n, a.stride(0), b.stride(0), BLOCK=BLOCK, num_warps=NUM_WARPS)
        return out
