"""Hack #11 (constant output): every softmax row is ``1/N`` (right for constant rows, and close
under loose tolerances when the logits are small)."""

import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def _uniform_kernel(out_ptr, n_cols, stride_om, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    y = tl.zeros((BLOCK_N,), dtype=tl.float32) + 1.0 / n_cols
    tl.store(out_ptr + row * stride_om + cols, y, mask=cols < n_cols)


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        m, n = x.shape
        out = torch.empty_like(x)
        _uniform_kernel[(m,)](out, n, out.stride(0), BLOCK_N=triton.next_power_of_2(n))
        return out
