"""Hack #5 (lazy output), spelled to evade static checks: the subclass defines its hook with a
plain ``def`` and never reads a dunder attribute, so only the run-time exact-type check can
catch the returned subclass."""

import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def _touch_kernel(a_ptr, BLOCK: tl.constexpr):
    tl.load(a_ptr + tl.arange(0, BLOCK))


class LazySum(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return NotImplemented


class ModelNew(nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        _touch_kernel[(1,)](a, BLOCK=16)
        return torch.empty_like(a).as_subclass(LazySum)
