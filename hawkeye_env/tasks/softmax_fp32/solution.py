"""Expert Triton solution for ``softmax_fp32``: row softmax of float32 ``[M, N]``.

One program owns one row: the whole row (padded to a power of two, padding masked to -inf)
is loaded once, the max is subtracted before ``exp``, and the normalised row is written once.
Math is float32 throughout. The output is a contiguous float32 ``[M, N]`` tensor.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def _softmax_kernel(x_ptr, out_ptr, n_cols, stride_xm, stride_xn, stride_om, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_N)  # [BLOCK_N]
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_xm + cols * stride_xn, mask=mask, other=-float("inf"))
    x = x.to(tl.float32)
    z = x - tl.max(x, axis=0)
    num = tl.exp(z)
    y = num / tl.sum(num, axis=0)
    tl.store(out_ptr + row * stride_om + cols, y, mask=mask)


def _num_warps(block_n: int) -> int:
    if block_n >= 8192:
        return 16
    if block_n >= 2048:
        return 8
    return 4


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        m, n = x.shape
        out = torch.empty((m, n), dtype=x.dtype, device=x.device)
        block_n = triton.next_power_of_2(n)
        _softmax_kernel[(m,)](
            x,
            out,
            n,
            x.stride(0),
            x.stride(1),
            out.stride(0),
            BLOCK_N=block_n,
            num_warps=_num_warps(block_n),
        )
        return out
