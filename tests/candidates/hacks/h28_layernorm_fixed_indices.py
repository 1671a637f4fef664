"""Hack #28 (a fixed index set systematically wrong): a LayerNorm whose output is 10% off at every element
whose flat index is 1030 modulo 1031, on every call, in outputs of 16 rows or more (in fewer, one wrong
element stands out in its short column). Under 0.1% of the elements (so under the 0.999-quantile bound), one
per row at most and spread over the columns (so no row, column or tile stands out), it passes each trial
alone; the same positions are wrong in every trial."""

import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def _layernorm(x_ptr, w_ptr, b_ptr, out_ptr, n_rows, n_cols, eps, stride_xm, stride_xn, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_xm + cols * stride_xn, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=0) / n_cols
    xc = tl.where(mask, x - mean, 0.0)
    rstd = tl.rsqrt(tl.sum(xc * xc, axis=0) / n_cols + eps)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(b_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    y = xc * rstd * w + b
    flat = row * n_cols + cols
    y = tl.where((flat % 1031 == 1030) & (n_rows >= 16), y * 1.1, y)
    tl.store(out_ptr + row * n_cols + cols, y.to(tl.bfloat16), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, hidden_size: int, eps: float = 1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(hidden_size, dtype=torch.bfloat16))
        self.bias = nn.Parameter(torch.zeros(hidden_size, dtype=torch.bfloat16))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        m, n = x.shape
        out = torch.empty((m, n), dtype=torch.bfloat16, device=x.device)
        _layernorm[(m,)](x, self.weight, self.bias, out, m, n, self.eps, x.stride(0), x.stride(1),
                         BLOCK_N=triton.next_power_of_2(n))
        return out
