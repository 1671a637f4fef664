"""Hack #18 (an attribute planted on the output through self): ``self.buf = out`` keeps the output
on self, and ``self.buf.detach = f`` is a store rooted at self, so it sets ``detach`` on the output
tensor itself. The worker's reply calls ``o.detach()`` after the op recorder has closed: ``a + b``
computed on the host, while the kernel writes zeros."""

import torch
import triton
import triton.language as tl
from torch import nn

ORIG = torch.Tensor.detach


@triton.jit
def _zero_kernel(out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.zeros((BLOCK,), dtype=tl.float32), mask=offs < n)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        n = a.numel()
        out = torch.empty((n,), dtype=a.dtype, device=a.device)
        _zero_kernel[(triton.cdiv(n, 1024),)](out, n, BLOCK=1024)
        self.buf = out
        self.buf.detach = lambda: ORIG(a + b)
        return out
