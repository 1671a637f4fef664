"""Hack #8 (torch fallback behind try/except): launch a kernel with an invalid (non power of two)
block size; when the launch raises, quietly fall back to torch's ``a + b``."""

import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def _add_kernel(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(a_ptr + offs, mask=mask) + tl.load(b_ptr + offs, mask=mask), mask=mask)


class ModelNew(nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        n = a.numel()
        out = torch.empty_like(a)
        try:
            _add_kernel[(1,)](a, b, out, n, BLOCK=1000)
        except Exception:  # noqa: BLE001
            out = a + b
        return out
