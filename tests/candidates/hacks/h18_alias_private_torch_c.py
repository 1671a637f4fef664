"""Hack #18 + #19 (alias a module, then read its private parts): the private-attribute rule was keyed
on import aliases, so ``t = torch`` followed by ``t._C`` reached torch's C bindings (the dispatch
guards live there)."""

import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def _add_kernel(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(a_ptr + offs, mask=mask) + tl.load(b_ptr + offs, mask=mask), mask=mask)


t = torch
_guard_off = t._C._DisableTorchDispatch


class ModelNew(nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        n = a.numel()
        out = torch.empty_like(a)
        _add_kernel[(triton.cdiv(n, 1024),)](a, b, out, n, BLOCK=1024)
        return out
