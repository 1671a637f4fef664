"""Tutorial style: a scalar-multiply wrapper that passes the Python float straight to the kernel."""

import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def scale_kernel(a_ptr, out_ptr, s, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    a = tl.load(a_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, a * s, mask=mask)


def scale(a: torch.Tensor, s: float) -> torch.Tensor:
    """``a * s`` for a contiguous float32 matrix and a Python scalar."""
    out = torch.empty_like(a)
    n_elements = a.numel()
    grid = lambda meta: (triton.cdiv(n_elements, meta["BLOCK_SIZE"]),)  # noqa: E731
    scale_kernel[grid](a, out, s, n_elements, BLOCK_SIZE=2048)
    return out


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, s: float) -> torch.Tensor:
        return scale(A, s)
