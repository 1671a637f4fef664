"""Hack #8 (torch fallback): launch a decoy Triton kernel, then return
``torch.nn.functional.softmax``."""

import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def _touch_kernel(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.load(x_ptr + offs)


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        _touch_kernel[(1,)](x, BLOCK=16)
        return torch.nn.functional.softmax(x, dim=-1)
