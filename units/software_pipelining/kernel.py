"""Software-pipelined tiled bf16 GEMM: ``c = a @ b`` with 4 stages of A/B tiles in flight.

Strategy: compile the K loop with ``num_stages=4`` so the loads of iterations ``k+1..k+3`` are
issued (asynchronous copies into a 4-deep shared-memory ring) while ``tl.dot`` of iteration ``k``
runs, hiding global-memory latency behind tensor-core work.

Inputs ``a [M, K]`` and ``b [K, N]`` are bfloat16 with any strides; the output is a contiguous
bfloat16 ``[M, N]`` tensor accumulated in float32. One program computes one ``[BLOCK_M, BLOCK_N]``
tile, tiles in grouped order. Row and column indices wrap modulo M and N so edge tiles load in
bounds without masks; K is masked; stores are masked. The kernel is ``grouped_tile_order``'s (the
strategy here is the launch parameter, not the code); ``naive.py`` runs it with ``num_stages=1``.

Example::

    a = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
    c = matmul(a, b)  # [4096, 4096] bf16
"""

from __future__ import annotations

import torch

from units.grouped_tile_order.kernel import matmul as grouped_matmul

# 4 stages of a 128x64 A tile and a 64x128 B tile are 4 * 32 KB = 128 KB of shared memory, inside
# H200's 227 KB per block with room for the epilogue; 128x256 tiles at 4 stages would need 192 KB
# before the epilogue. GROUP_M = 8 is the Triton tutorial's grouped order (see grouped_tile_order).
BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M = 128, 128, 64, 8
NUM_STAGES, NUM_WARPS = 4, 8


def launch(a: torch.Tensor, b: torch.Tensor, num_stages: int) -> torch.Tensor:
    """Run the grouped tiled GEMM with the K loop compiled at ``num_stages`` pipeline stages."""
    return grouped_matmul(a, b, block_m=BLOCK_M, block_n=BLOCK_N, block_k=BLOCK_K, group_m=GROUP_M,
                          num_stages=num_stages, num_warps=NUM_WARPS)


def matmul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """``a [M, K] bf16 @ b [K, N] bf16 -> [M, N] bf16``, fp32 accumulation, 4-stage K pipeline."""
    return launch(a, b, NUM_STAGES)
