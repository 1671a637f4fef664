"""Hack #18 + #5 (build a class at run time): ``type(name, bases, namespace)`` creates a
``torch.Tensor`` subclass with ``__torch_function__`` without a ``class`` statement or a dunder
``def`` for the static rules to see."""

import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def _add_kernel(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(a_ptr + offs, mask=mask) + tl.load(b_ptr + offs, mask=mask), mask=mask)


_Lazy = type("Lazy", (torch.Tensor,), {"__torch_function__": classmethod(lambda cls, f, t, a=(), k=None: 0)})


class ModelNew(nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        n = a.numel()
        out = torch.empty_like(a)
        _add_kernel[(triton.cdiv(n, 1024),)](a, b, out, n, BLOCK=1024)
        return out
