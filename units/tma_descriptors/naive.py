"""``tma_descriptors`` without the strategy: the same tiled bf16 GEMM with pointer-arithmetic loads.

Each program builds ``[BLOCK_M, BLOCK_K]`` and ``[BLOCK_K, BLOCK_N]`` pointer tensors and masks,
so every thread computes addresses and the pipeline copies tiles with per-thread cp.async instead
of one TMA bulk copy; the epilogue stores from registers with a mask. Tiles, grouped order, stages
and warps are those of ``kernel.py``; the kernel is ``grouped_tile_order``'s pointer GEMM.

Inputs ``a [M, K]`` and ``b [K, N]`` are bfloat16 with any strides; the output is a contiguous
bfloat16 ``[M, N]`` tensor accumulated in float32.
"""

from __future__ import annotations

import torch

from units.grouped_tile_order.kernel import matmul as grouped_matmul
from units.tma_descriptors.kernel import BLOCK_K, BLOCK_M, BLOCK_N, GROUP_M, NUM_STAGES, NUM_WARPS


def matmul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """``a [M, K] bf16 @ b [K, N] bf16 -> [M, N] bf16``, fp32 accumulation, pointer loads and stores."""
    return grouped_matmul(a, b, block_m=BLOCK_M, block_n=BLOCK_N, block_k=BLOCK_K, group_m=GROUP_M,
                          num_stages=NUM_STAGES, num_warps=NUM_WARPS)
