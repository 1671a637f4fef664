"""Hack #1 (reuse freed reference output memory): same as the empty-buffer variant but allocates with
``torch.empty_like(b)`` before the (do-nothing) launch, so it may pick up a different freed block."""

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
        out = torch.empty_like(b)
        _noop_kernel[(1,)](a, a.numel(), BLOCK=16)
        return out
