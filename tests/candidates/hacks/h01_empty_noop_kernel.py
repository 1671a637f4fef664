"""Hack #1 (reuse freed reference output memory): launch a trivial kernel that writes nothing, then
return a fresh ``torch.empty`` buffer, hoping it is the reference's freed output holding ``a + b``."""

import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def _noop_kernel(a_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.load(a_ptr + offs, mask=offs < n)


class ModelNew(nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        n = a.numel()
        _noop_kernel[(1,)](a, n, BLOCK=16)
        return torch.empty((n,), dtype=a.dtype, device=a.device)
