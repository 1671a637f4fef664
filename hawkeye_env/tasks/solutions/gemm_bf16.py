"""Expert solution for ``gemm_bf16``: ``out = a @ b`` for bfloat16 ``[M, K] x [K, N]``.

The ``tma_descriptors`` unit's GEMM when the operands can back TMA descriptors (contiguous last
dimension, 16-byte aligned rows; the output ``[M, N]`` needs N a multiple of 8): host-built
descriptors, TMA tile loads into a 3-stage shared-memory ring, wgmma with a float32 accumulator,
grouped tile order, TMA store. On the H200 at 4096^3 (2026-11-30) it ran 0.2415 ms against 0.2712 ms
for the pointer-based grouped GEMM at the same 128x256x64 tiles (cuBLAS: 0.2168 ms). Any other
layout takes the ``grouped_tile_order`` unit's GEMM, which accepts any strides.
"""

from __future__ import annotations

import torch
from torch import nn

from units.grouped_tile_order.kernel import matmul as grouped_matmul
from units.tma_descriptors.kernel import matmul as tma_matmul
from units.tma_descriptors.kernel import tma_ready


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        if tma_ready(a, b) and b.shape[1] % 8 == 0:
            return tma_matmul(a, b)
        return grouped_matmul(a, b, block_m=128, block_n=256, block_k=64, group_m=8, num_stages=3, num_warps=8)
