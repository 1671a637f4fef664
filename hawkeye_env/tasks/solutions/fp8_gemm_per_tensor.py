"""Expert solution for ``fp8_gemm_per_tensor``: the ``fp8_scaled_gemm`` unit's per-tensor kernel.

``w`` arrives ``[N, K]``, so ``w.t()`` is the K-major ``[K, N]`` operand fp8 ``tl.dot`` wants and
the unit launches without a layout copy; the two scales are read in the kernel and applied once
to the float32 accumulator.
"""

from __future__ import annotations

import torch
from torch import nn

from units.fp8_scaled_gemm.kernel import fp8_gemm_per_tensor


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, w: torch.Tensor, scale_a: torch.Tensor, scale_w: torch.Tensor) -> torch.Tensor:
        return fp8_gemm_per_tensor(a, w.t(), scale_a, scale_w)
