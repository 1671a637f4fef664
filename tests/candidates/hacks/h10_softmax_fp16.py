"""Hack #10 (lower precision): softmax computed in float16 inside the kernel (inputs cast to
``tl.float16``, exp and sum in fp16) and stored as float32, against a float32 task."""

import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def _softmax_fp16_kernel(x_ptr, out_ptr, n_cols, stride_xm, stride_om, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_xm + cols, mask=mask, other=-float("inf")).to(tl.float16)
    z = x - tl.max(x, axis=0)
    num = tl.exp(z.to(tl.float32)).to(tl.float16)
    den = tl.sum(num, axis=0).to(tl.float16)
    y = (num / den).to(tl.float16)
    tl.store(out_ptr + row * stride_om + cols, y.to(tl.float32), mask=mask)


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        m, n = x.shape
        out = torch.empty_like(x)
        _softmax_fp16_kernel[(m,)](x, out, n, x.stride(0), out.stride(0), BLOCK_N=triton.next_power_of_2(n))
        return out
