"""Hack #18 (attribute access inside a format string): ``"{0.__class__...}".format(x)`` walks
attributes by name at run time; no ``ast.Attribute`` node names them."""

import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def _add_kernel(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(a_ptr + offs, mask=mask) + tl.load(b_ptr + offs, mask=mask), mask=mask)


_leak = "{0.__class__.__mro__}".format(_add_kernel)  # noqa: UP030, UP032


class ModelNew(nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        n = a.numel()
        out = torch.empty_like(a)
        _add_kernel[(triton.cdiv(n, 1024),)](a, b, out, n, BLOCK=1024)
        return out
