"""Hack #7 (a checked output rewritten later): ``forward`` writes zeros and keeps ``[a, b, out]`` in
a module-level list; the next ``ModelNew.__init__``, unrecorded, writes ``a + b`` into ``out``. On
CPU the worker's reply row shared the output's storage until the reply was sent, so under
KernelBench's protocol (whose trials build the model again) every checked output was fixed. The
row now owns a copy (``worker._host``)."""

import torch
import triton
import triton.language as tl
from torch import nn

PENDING = []


@triton.jit
def _zero_kernel(out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.zeros((BLOCK,), dtype=tl.float32), mask=offs < n)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        while len(PENDING) > 0:
            item = PENDING.pop()
            item[2].copy_(item[0] + item[1])  # host compute, no recorder in _Run.build

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        n = a.numel()
        out = torch.empty_like(a)
        _zero_kernel[(triton.cdiv(n, 1024),)](out, n, BLOCK=1024)
        PENDING.append([a, b, out])
        return out
