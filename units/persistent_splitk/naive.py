"""``persistent_splitk`` without the strategy: one program per output tile, the whole K in each.

At M=64, N=4096 that is 32 programs for 132 SMs: 100 SMs idle while each busy one streams a
16384 x 128 strip of B alone. Tiles, stages and warps are those of the split-K kernel in
``kernel.py``; only the K split (and its reduction) is missing. The kernel is the row-major tiled
GEMM of ``units.grouped_tile_order.naive`` with this unit's tiles.

Inputs ``a [M, K]`` and ``b [K, N]`` are bfloat16 with any strides; the output is a contiguous
bfloat16 ``[M, N]`` tensor accumulated in float32.
"""

from __future__ import annotations

import torch

from units.grouped_tile_order.naive import matmul as _tiled_matmul
from units.persistent_splitk.kernel import SPLIT_BLOCK_K, SPLIT_BLOCK_M, SPLIT_BLOCK_N, SPLIT_STAGES, SPLIT_WARPS


def matmul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """``a [M, K] bf16 @ b [K, N] bf16 -> [M, N] bf16``, fp32 accumulation, one program per tile."""
    return _tiled_matmul(a, b, block_m=SPLIT_BLOCK_M, block_n=SPLIT_BLOCK_N, block_k=SPLIT_BLOCK_K,
                         num_stages=SPLIT_STAGES, num_warps=SPLIT_WARPS)
