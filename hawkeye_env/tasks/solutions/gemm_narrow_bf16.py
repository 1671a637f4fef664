"""Expert solution for ``gemm_narrow_bf16``: the ``grouped_tile_order`` unit's GEMM at Hopper tiles.

``units.grouped_tile_order.kernel.matmul`` is a tiled ``tl.dot`` GEMM (float32 accumulator,
software-pipelined K loop, grouped tile order). At N = 1024 a group of ``GROUP_M`` tile-rows
spans every tile column, so the programs that share an A strip run together and A crosses DRAM
about once while B (16 MB) stays in L2. ``tile_config`` sets the tiles.
"""

from __future__ import annotations

import torch
from torch import nn

from units.grouped_tile_order.kernel import matmul


def tile_config(m: int, n: int, k: int) -> dict:
    """Tiles for the timed M = 16384, N = 1024, K = 8192 shape, used at every shape so the CPU
    checks run the timed configuration: 128x256x64, 3 stages, 8 warps, GROUP_M = 8, one of the
    Hopper configurations of Triton's matmul tutorial (autotuned over 4 of them it measured 0.96x
    cuBLAS at this shape on the H200, anchors/h200-2026-11-29.json); 512 tiles are 3.9 waves on
    132 SMs."""
    return {"block_m": 128, "block_n": 256, "block_k": 64, "group_m": 8, "num_stages": 3, "num_warps": 8}


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return matmul(a, b, **tile_config(a.shape[0], b.shape[1], a.shape[1]))
