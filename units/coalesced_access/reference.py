"""PyTorch reference of ``coalesced_access``: ``x * alpha`` for ``x [M, N]``, result in ``x``'s dtype.

Float32 math, rounded once to ``x``'s dtype (float64 inputs stay float64).
"""

from __future__ import annotations

import torch


def scale(x: torch.Tensor, alpha: float) -> torch.Tensor:
    """``x [M, N]`` times the scalar ``alpha``."""
    compute = torch.float64 if x.dtype == torch.float64 else torch.float32
    return (x.to(compute) * alpha).to(x.dtype)
