"""Expert solution for ``linear_large_bf16``: the ``grouped_tile_order`` unit's GEMM on ``w.t()``.

``y = x @ w.t()``: ``w.t()`` of the ``[N, K]`` weight is a ``[K, N]`` view with K stride 1, which
``units.grouped_tile_order.kernel.matmul`` takes as is (any strides; weight tiles load
K-contiguous and feed ``tl.dot`` without a copy). Tiles are visited in groups of ``GROUP_M``
tile-rows so resident programs share activation and weight strips in L2. ``tile_config`` sets
the tiles.
"""

from __future__ import annotations

import torch
from torch import nn

from units.grouped_tile_order.kernel import matmul


def tile_config(m: int, n: int, k: int) -> dict:
    """Tiles for the timed M = 8192, N = 4096, K = 14336 shape, used at every shape so the CPU
    checks run the timed configuration: 128x256x64, 3 stages, 8 warps, GROUP_M = 8, one of the
    Hopper configurations of Triton's matmul tutorial (autotuned over 4 of them it measured
    0.96x cuBLAS on large bf16 GEMMs on the H200, anchors/h200-2026-11-29.json); 1024 tiles are
    7.8 waves on 132 SMs, each with a 224-step K loop."""
    return {"block_m": 128, "block_n": 256, "block_k": 64, "group_m": 8, "num_stages": 3, "num_warps": 8}


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(out_features, in_features, dtype=torch.bfloat16))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        w = self.weight
        return matmul(x, w.t(), **tile_config(x.shape[0], w.shape[0], x.shape[1]))
