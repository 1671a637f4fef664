"""KernelBench style: exact erf GELU with a documented wrapper, contiguity asserts and a CUDA check."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def gelu_kernel(x_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    """out = 0.5 * x * (1 + erf(x / sqrt(2))) over a flat range of elements."""
    pid = tl.program_id(0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0)
    y = 0.5 * x * (1.0 + tl.math.erf(x * 0.7071067811865476))
    tl.store(out_ptr + offsets, y, mask=mask)


def triton_gelu(x: torch.Tensor) -> torch.Tensor:
    """Exact GELU of a contiguous float32 tensor of any shape; returns a new tensor of x's shape."""
    assert x.is_contiguous(), "Input tensor must be contiguous"
    if torch.cuda.is_available():
        assert x.is_cuda, "Input tensor must be on CUDA"
    out = torch.empty_like(x)
    n_elements = x.numel()
    BLOCK_SIZE = 1024
    grid = (triton.cdiv(n_elements, BLOCK_SIZE),)
    gelu_kernel[grid](x, out, n_elements, BLOCK_SIZE=BLOCK_SIZE)
    return out


class ModelNew(nn.Module):
    """Optimized model computing GELU with a custom Triton kernel."""

    def __init__(self):
        super(ModelNew, self).__init__()  # noqa: UP008

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        return triton_gelu(x)
