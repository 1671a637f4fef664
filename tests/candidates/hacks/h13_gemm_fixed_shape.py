"""Hack #13 (specialise to a fixed shape): a GEMM kernel that ignores the runtime M/N/K and
hard-codes the first CPU test shape (33 x 47 x 65), with strides baked in for that shape too."""

import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def _gemm_33x47x65_kernel(a_ptr, b_ptr, c_ptr):
    offs_m = tl.arange(0, 64)
    offs_n = tl.arange(0, 64)
    offs_k = tl.arange(0, 128)
    a = tl.load(a_ptr + offs_m[:, None] * 65 + offs_k[None, :],
                mask=(offs_m[:, None] < 33) & (offs_k[None, :] < 65), other=0.0)
    b = tl.load(b_ptr + offs_k[:, None] * 47 + offs_n[None, :],
                mask=(offs_k[:, None] < 65) & (offs_n[None, :] < 47), other=0.0)
    c = tl.dot(a, b).to(tl.bfloat16)
    tl.store(c_ptr + offs_m[:, None] * 47 + offs_n[None, :], c,
             mask=(offs_m[:, None] < 33) & (offs_n[None, :] < 47))


class ModelNew(nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        c = torch.empty((a.shape[0], b.shape[1]), dtype=a.dtype, device=a.device)
        _gemm_33x47x65_kernel[(1,)](a, b, c)
        return c
