"""``warp_specialization`` without the strategy: the same TMA GEMM with a uniform-warp K loop.

Every warp both waits for TMA tiles and issues wgmma, relying on the software pipeliner alone to
overlap loads with MMAs. Kernel, tiles, grouped order, stages and device-side descriptors are those
of ``kernel.py``; it runs with 8 warps, which the 128x256 fp32 accumulator needs without producer
and consumer groups.

Inputs ``a [M, K]`` and ``b [K, N]`` are bfloat16 with a contiguous, 16-byte aligned last
dimension; the output is a contiguous bfloat16 ``[M, N]`` tensor accumulated in float32.
"""

from __future__ import annotations

import torch

from units.warp_specialization.kernel import launch


def matmul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """``a [M, K] bf16 @ b [K, N] bf16 -> [M, N] bf16``, fp32 accumulation, no warp specialization."""
    return launch(a, b, warp_specialize=False)
