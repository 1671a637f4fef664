"""Expert Triton solution for ``rmsnorm_bf16``: RMSNorm of bfloat16 ``[M, N]`` with weight ``[N]``.

One program owns one row: it loads the bfloat16 row and weight, computes
``x * rsqrt(mean(x^2) + eps) * weight`` in float32 and stores bfloat16 once. The output is a
contiguous bfloat16 ``[M, N]`` tensor; ``weight`` matches the reference module's parameter.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def _rmsnorm_kernel(
    x_ptr,
    w_ptr,
    out_ptr,
    n_cols,
    eps,
    stride_xm,
    stride_xn,
    stride_w,
    stride_om,
    BLOCK_N: tl.constexpr,
):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_N)  # [BLOCK_N]
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_xm + cols * stride_xn, mask=mask, other=0.0).to(tl.float32)
    w = tl.load(w_ptr + cols * stride_w, mask=mask, other=0.0).to(tl.float32)
    inv_rms = tl.rsqrt(tl.sum(x * x, axis=0) / n_cols + eps)
    y = x * inv_rms * w
    tl.store(out_ptr + row * stride_om + cols, y.to(tl.bfloat16), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, hidden_size: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(hidden_size, dtype=torch.bfloat16))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        m, n = x.shape
        out = torch.empty((m, n), dtype=torch.bfloat16, device=x.device)
        block_n = triton.next_power_of_2(n)
        num_warps = 8 if block_n >= 2048 else 4
        w = self.weight
        _rmsnorm_kernel[(m,)](
            x,
            w,
            out,
            n,
            self.eps,
            x.stride(0),
            x.stride(1),
            w.stride(0),
            out.stride(0),
            BLOCK_N=block_n,
            num_warps=num_warps,
        )
        return out
