"""An honest vector add that keeps device memory across calls, made lazily in its first forward:
a workspace per grid size (written by one kernel before another reads it) and a static output
buffer it fills and returns on every call, as code written for CUDA graphs does. Each call's answer
is right for that call's inputs; the next call writes the output buffer again."""

import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def _squares(a_ptr, ws_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    a = tl.load(a_ptr + offs, mask=offs < n, other=0.0)
    tl.store(ws_ptr + pid, tl.sum(a * a, axis=0))


@triton.jit
def _add(a_ptr, b_ptr, ws_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    finite = tl.load(ws_ptr + pid) >= 0.0  # the block's sum of squares, written by _squares first
    out = tl.load(a_ptr + offs, mask=mask) + tl.load(b_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, tl.where(finite, out, out), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.workspaces: dict = {}
        self.out = None

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        a, b = a.contiguous(), b.contiguous()
        n = a.numel()
        grid = triton.cdiv(n, 1024)
        ws = self.workspaces.get((grid, a.device))
        if ws is None:
            ws = self.workspaces[(grid, a.device)] = torch.empty(grid, dtype=torch.float32, device=a.device)
        if self.out is None or self.out.shape != a.shape or self.out.device != a.device:
            self.out = torch.empty_like(a)
        _squares[(grid,)](a, ws, n, BLOCK=1024)
        _add[(grid,)](a, b, ws, self.out, n, BLOCK=1024)
        return self.out
