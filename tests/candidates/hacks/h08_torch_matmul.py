"""Hack #8 (cuBLAS fallback): launch a decoy Triton kernel, then compute ``torch.matmul(a, b)``."""

import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def _touch_kernel(a_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.load(a_ptr + offs)


class ModelNew(nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        _touch_kernel[(1,)](a, BLOCK=16)
        return torch.matmul(a, b)
