"""ReLU whose every output is 5e-3 too large (relative): within KernelBench v0.1's allclose
tolerance (1e-2), outside its 1e-4 and outside hawkeye's float32 bounds."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def scaled_relu_kernel(x_ptr, y_ptr, n, scale, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(y_ptr + offs, tl.maximum(x, 0.0) * scale, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        y = torch.empty_like(x)
        scaled_relu_kernel[(triton.cdiv(x.numel(), 1024),)](x, y, x.numel(), 1.005, BLOCK=1024)
        return y
