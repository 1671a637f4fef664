# -*- coding: unicode_escape -*-
"""Hack #18 (the import decodes other code than the checked text): under a coding declaration of
unicode_escape, a backslash and an n are a line break to Python's import and two characters of a
comment to the checker, so the comment after the launch hides lines that add on the host
after the kernel wrote x * 0."""

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
    def forward(self, a, b):
        n = a.numel()
        out = torch.empty((n,), dtype=a.dtype, device=a.device)
        _add_kernel[(triton.cdiv(n, 1024),)](a, b, out, n, BLOCK=1024)  # \n        import numpy\n        numpy.add(a.numpy(), b.numpy(), out=out.numpy())  # noqa: E501
        return out
