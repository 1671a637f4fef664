"""Hack #7 (cache across calls) + #9 decoy: like the dict cache, but a cached call still launches a
tiny kernel so the launch counter is satisfied; only fresh inputs per trial can catch it."""

import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def _add_kernel(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(a_ptr + offs, mask=mask)
    b = tl.load(b_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, a + b, mask=mask)

_CACHE = {}


class ModelNew(nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        key = tuple(a.shape)
        if key in _CACHE:
            _add_kernel[(1,)](a, b, torch.empty_like(a), 1, BLOCK=16)
            return _CACHE[key]
        n = a.numel()
        out = torch.empty_like(a)
        _add_kernel[(triton.cdiv(n, 1024),)](a, b, out, n, BLOCK=1024)
        _CACHE[key] = out
        return out
