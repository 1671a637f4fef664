"""Hack #8 (host fallback through scalar reads): ``float(a[i])`` reads one element on the host
(``aten._local_scalar_dense``) and ``out[i].fill_(v)`` writes one, so a Python loop computes the
sum with no compute op while the kernel stores ``x * 0``. On a GPU the replay refuses host reads;
on CPU the recorder does too."""

import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def _add_kernel(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(a_ptr + offs, mask=mask) * 0.0, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        n = a.numel()
        out = torch.empty((n,), dtype=a.dtype, device=a.device)
        _add_kernel[(triton.cdiv(n, 1024),)](a, b, out, n, BLOCK=1024)
        for i in range(n):
            out[i].fill_(float(a[i]) + float(b[i]))
        return out
