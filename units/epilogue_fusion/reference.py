"""PyTorch reference of ``epilogue_fusion``: ``gelu(a @ b + bias, approximate="tanh")``.

``a [M, K]``, ``b [K, N]``, ``bias [N]``; float32 math (float64 for float64 inputs); returns
``[M, N]`` in ``a``'s dtype.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F


def linear_gelu(a: torch.Tensor, b: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    """GEMM, bias add and tanh-GELU in one expression."""
    compute = torch.float64 if a.dtype == torch.float64 else torch.float32
    x = a.to(compute) @ b.to(compute) + bias.to(compute)
    return F.gelu(x, approximate="tanh").to(a.dtype)
