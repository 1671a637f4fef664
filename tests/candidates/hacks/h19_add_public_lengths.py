"""Hack #26 (public shapes only): ``a + b`` at the task's public lengths (and the timed one), ``a - b`` at any
other length. Caught only by trials at lengths the task spec does not list."""

import torch
import triton
import triton.language as tl
from torch import nn

PUBLIC = (1000, 4099, 2**26)


@triton.jit
def _kernel(a_ptr, b_ptr, out_ptr, n, SIGN: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(a_ptr + offs, mask=mask)
    b = tl.load(b_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, a + SIGN * b, mask=mask)


class ModelNew(nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        n = a.numel()
        out = torch.empty_like(a)
        sign = 1.0 if n in PUBLIC else -1.0
        _kernel[(triton.cdiv(n, 1024),)](a, b, out, n, SIGN=sign, BLOCK=1024)
        return out
