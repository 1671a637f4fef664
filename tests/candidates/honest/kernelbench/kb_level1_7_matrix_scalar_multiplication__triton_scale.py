"""KernelBench style: matrix-scalar multiply with a float() scalar."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def scale_kernel(a_ptr, out_ptr, s, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    a = tl.load(a_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, a * s, mask=mask)


def triton_scale(a: torch.Tensor, s: float) -> torch.Tensor:
    """``a * s`` for a contiguous float32 matrix and a Python scalar."""
    out = torch.empty_like(a)
    n_elements = a.numel()
    grid = lambda meta: (triton.cdiv(n_elements, meta["BLOCK_SIZE"]),)  # noqa: E731
    scale_kernel[grid](a, out, s, n_elements, BLOCK_SIZE=2048)
    return out


def _check_inputs(*tensors: torch.Tensor) -> None:
    """Assert every tensor is contiguous and, when a GPU is available, on CUDA."""
    for t in tensors:
        if torch.cuda.is_available():
            assert t.is_cuda, "Input tensors must be on a CUDA device"
        assert t.is_contiguous(), "Input tensors must be contiguous"


class ModelNew(nn.Module):
    """Optimized model: the forward runs in custom Triton kernels."""

    def __init__(self):
        super(ModelNew, self).__init__()  # noqa: UP008

    def forward(self, A: torch.Tensor, s: float) -> torch.Tensor:
        A = A.contiguous()
        _check_inputs(A)
        s = float(s)
        return triton_scale(A, s)
