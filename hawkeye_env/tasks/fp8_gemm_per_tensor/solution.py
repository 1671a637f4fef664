"""Expert solution for ``fp8_gemm_per_tensor``: the ``ws_fp8_gemm`` unit's warp-specialized Gluon
kernel on a Hopper GPU, the ``fp8_scaled_gemm`` unit's Triton-language twin elsewhere.

``w`` arrives ``[N, K]``, so ``w.t()`` is the K-major ``[K, N]`` operand fp8 wgmma wants and both
kernels launch without a layout copy; the two scales are read in the kernel and applied once to
the float32 accumulator. On CUDA: one TMA producer warp, two wgmma consumer warpgroups, an mbarrier
ring, the wgmma chain promoted into float32 every 4 K steps (``units/ws_fp8_gemm/README.md``).
TMA needs 16-byte rows (``fits_tma``: K % 16 == 0, N % 8 == 0), and Gluon has no interpreter, so
at other shapes and on the CPU the Triton twin (the same tiles and promotion, every warp loading and
multiplying) computes the same maths (``per_tensor_or_twin`` picks).
"""

from __future__ import annotations

import torch
from torch import nn

from units.ws_fp8_gemm.kernel import per_tensor_or_twin


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, w: torch.Tensor, scale_a: torch.Tensor, scale_w: torch.Tensor) -> torch.Tensor:
        return per_tensor_or_twin(a, w.t(), scale_a, scale_w)
