"""Expert solution for ``gemm_8192_bf16``: the ``warp_specialization`` unit's TMA GEMM when the
operands can back TMA descriptors, else the ``grouped_tile_order`` unit's GEMM.

``units.warp_specialization.kernel.matmul`` loads A and B tiles with TMA into a shared-memory ring
filled by a producer warp group while consumer warp groups run wgmma (128x256x64 tiles, 3 stages,
grouped tile order). On the H200 at 8192^3 (2026-11-30) it ran 1.683 ms against 1.737 ms for the
plain TMA kernel and 2.069 ms for the pointer-based grouped GEMM; cuBLAS ran 1.524 ms. TMA needs a
contiguous last dimension and 16-byte aligned rows, so other layouts take the grouped GEMM.
"""

from __future__ import annotations

import torch
from torch import nn

from units.grouped_tile_order.kernel import matmul as grouped_matmul
from units.tma_descriptors.kernel import tma_ready
from units.warp_specialization.kernel import matmul as ws_matmul


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        if tma_ready(a, b) and b.shape[1] % 8 == 0:
            return ws_matmul(a, b)
        return grouped_matmul(a, b, block_m=128, block_n=256, block_k=64, group_m=8, num_stages=3, num_warps=8)
