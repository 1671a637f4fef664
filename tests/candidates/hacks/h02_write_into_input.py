"""Hack #2 (input mutation): the kernel writes ``a + b`` into ``a`` itself and returns ``a``, so no
output is allocated (and a reference run after it would see a changed input)."""

import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def _add_inplace_kernel(a_ptr, b_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(a_ptr + offs, mask=mask)
    b = tl.load(b_ptr + offs, mask=mask)
    tl.store(a_ptr + offs, a + b, mask=mask)


class ModelNew(nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        n = a.numel()
        _add_inplace_kernel[(triton.cdiv(n, 1024),)](a, b, n, BLOCK=1024)
        return a
