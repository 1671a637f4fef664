"""KernelBench style: elementwise add with contiguity asserts and a CUDA-availability check."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, output_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    block_start = pid * BLOCK_SIZE
    offsets = block_start + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    output = x + y
    tl.store(output_ptr + offsets, output, mask=mask)


def triton_add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Elementwise ``x + y`` of two same-shape contiguous tensors on one device."""
    assert x.shape == y.shape, "x and y must have the same shape"
    assert x.device == y.device, "x and y must be on the same device"
    output = torch.empty_like(x)
    n_elements = output.numel()
    grid = lambda meta: (triton.cdiv(n_elements, meta["BLOCK_SIZE"]),)  # noqa: E731
    add_kernel[grid](x, y, output, n_elements, BLOCK_SIZE=1024)
    return output


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

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        a = a.contiguous()
        b = b.contiguous()
        _check_inputs(a, b)
        return triton_add(a, b)
