"""Expert Triton solution for ``layernorm_bf16``: LayerNorm of bfloat16 ``[M, N]`` rows.

One program owns one row: it loads the row once, computes the mean and the biased variance in
float32 (two passes over registers, not over DRAM), normalises, applies ``weight`` and ``bias``
and stores bfloat16 once. The output is a contiguous bfloat16 ``[M, N]`` tensor.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def _layernorm_kernel(x_ptr, w_ptr, b_ptr, out_ptr, n_cols, eps, stride_xm, stride_xn, stride_w, stride_b,
                      stride_om, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_N)  # [BLOCK_N]
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_xm + cols * stride_xn, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=0) / n_cols
    xc = tl.where(mask, x - mean, 0.0)
    rstd = tl.rsqrt(tl.sum(xc * xc, axis=0) / n_cols + eps)
    w = tl.load(w_ptr + cols * stride_w, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(b_ptr + cols * stride_b, mask=mask, other=0.0).to(tl.float32)
    tl.store(out_ptr + row * stride_om + cols, (xc * rstd * w + b).to(tl.bfloat16), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, hidden_size: int, eps: float = 1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(hidden_size, dtype=torch.bfloat16))
        self.bias = nn.Parameter(torch.zeros(hidden_size, dtype=torch.bfloat16))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        m, n = x.shape
        out = torch.empty((m, n), dtype=torch.bfloat16, device=x.device)
        block_n = triton.next_power_of_2(n)
        w, b = self.weight, self.bias
        _layernorm_kernel[(m,)](
            x, w, b, out, n, self.eps, x.stride(0), x.stride(1), w.stride(0), b.stride(0), out.stride(0),
            BLOCK_N=block_n, num_warps=8 if block_n >= 2048 else 4,
        )
        return out
