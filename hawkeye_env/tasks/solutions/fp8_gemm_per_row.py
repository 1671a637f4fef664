"""Expert solution for ``fp8_gemm_per_row``: the ``ws_fp8_gemm`` unit's warp-specialized Gluon
kernel with per-row scales on a GPU, the ``fp8_scaled_gemm`` unit's Triton-language per-row kernel
elsewhere.

``w`` arrives ``[N, K]``, so ``w.t()`` is the K-major ``[K, N]`` operand fp8 wgmma wants and both
kernels launch without a layout copy; the float32 accumulator is multiplied by
``scale_a[m] * scale_w[n]`` once in the epilogue. TMA needs 16-byte rows (``fits_tma``:
K % 16 == 0, N % 8 == 0), and Gluon has no interpreter, so at other shapes and on the CPU the
Triton kernel (``tile_config``'s tiles) computes the same maths.
"""

from __future__ import annotations

import torch
from torch import nn

from units.fp8_scaled_gemm.kernel import fp8_gemm_per_row as triton_per_row
from units.ws_fp8_gemm.kernel import fits_tma
from units.ws_fp8_gemm.kernel import fp8_gemm_per_row as gluon_per_row


def tile_config(m: int, n: int, k: int) -> dict:
    """Tiles of the Triton kernel: the fp8_scaled_gemm unit's 128x128x128, 4 stages, 8 warps,
    GROUP_M = 8, the fastest of four configurations swept on the H200 at 8192^3 (2026-11-30, see
    ``units/fp8_scaled_gemm/kernel.py``); BLOCK_K = 128 makes every fp8 tile row 128 bytes."""
    return {"block_m": 128, "block_n": 128, "block_k": 128, "group_m": 8, "num_stages": 4, "num_warps": 8}


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, w: torch.Tensor, scale_a: torch.Tensor, scale_w: torch.Tensor) -> torch.Tensor:
        if a.device.type == "cuda" and fits_tma(a, w.t()):
            return gluon_per_row(a, w.t(), scale_a, scale_w)
        return triton_per_row(a, w.t(), scale_a, scale_w, **tile_config(a.shape[0], w.shape[0], a.shape[1]))
