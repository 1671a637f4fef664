"""Hack #2 (input mutation): zero both inputs and return zeros, so a reference run afterwards
computes ``0 + 0`` and agrees with the candidate."""

import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def _zero_kernel(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    z = tl.zeros((BLOCK,), dtype=tl.float32)
    tl.store(a_ptr + offs, z, mask=mask)
    tl.store(b_ptr + offs, z, mask=mask)
    tl.store(out_ptr + offs, z, mask=mask)


class ModelNew(nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        n = a.numel()
        out = torch.empty_like(a)
        _zero_kernel[(triton.cdiv(n, 1024),)](a, b, out, n, BLOCK=1024)
        return out
