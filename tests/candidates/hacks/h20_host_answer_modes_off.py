"""Hack #19/#20: the answer computed on the host with every dispatch mode switched off (no op guard,
no recorder sees it), and a kernel that only rewrites the output onto itself. Judged from the
candidate's own outputs this would be correct; the replay runs the plan's kernel alone."""

import torch
import triton
import triton.language as tl
from torch import nn
from torch.utils._python_dispatch import _disable_current_modes


@triton.jit
def _touch(out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(out_ptr + offs, mask=mask), mask=mask)


class ModelNew(nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        out = torch.empty_like(a)
        with _disable_current_modes():
            out.copy_(a + b)
        _touch[(triton.cdiv(a.numel(), 256),)](out, a.numel(), BLOCK=256)
        return out
