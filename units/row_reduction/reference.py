"""PyTorch reference of ``row_reduction``: RMSNorm forward of ``x [M, N]`` with ``weight [N]``.

Float32 math (float64 for float64 inputs); returns ``[M, N]`` in ``x``'s dtype.
"""

from __future__ import annotations

import torch


def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    """``x * rsqrt(mean(x^2, -1) + eps) * weight``."""
    compute = torch.float64 if x.dtype == torch.float64 else torch.float32
    xc = x.to(compute)
    y = xc * torch.rsqrt(xc.pow(2).mean(dim=-1, keepdim=True) + eps) * weight.to(compute)
    return y.to(x.dtype)
