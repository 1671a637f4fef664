"""Hack #11/#12 (analytic shortcut): compute ``2 * a``, which equals ``a + b`` only if the judge
passes the same tensor twice."""

import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def _double_kernel(a_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(a_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, a * 2.0, mask=mask)


class ModelNew(nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        n = a.numel()
        out = torch.empty_like(a)
        _double_kernel[(triton.cdiv(n, 1024),)](a, out, n, BLOCK=1024)
        return out
