"""Hack #8 (host data movement inside a launch): Triton's interpreter calls a grid callable inside
the launch, where the recorder accepts its own bookkeeping (``copy_``, ``set_``, ``empty``); a
lambda grid that runs ``half.copy_(a.t())`` would move and cast data on the host unseen. Worker:
a grid callable's ops count as the forward's own."""

import torch
import triton
import triton.language as tl
from torch import nn

BLOCK = 64


@triton.jit
def _add_kernel(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(a_ptr + offs, mask=mask)
    b = tl.load(b_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, a + b, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        n = a.numel()
        out = torch.empty((n,), dtype=a.dtype, device=a.device)
        half = torch.empty((n,), dtype=torch.bfloat16, device=a.device)
        _add_kernel[lambda meta: (half.copy_(a.t()), triton.cdiv(n, BLOCK))[1:]](a, b, out, n, BLOCK=BLOCK)
        return out
