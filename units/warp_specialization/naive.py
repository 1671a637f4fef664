"""``warp_specialization`` without the strategy: ``kernel.NAIVE``, the solution's GEMM without the keyword.

Every warp both waits for TMA tiles and issues wgmma, relying on the software pipeliner alone to
overlap loads with MMAs. Kernel, tiles, grouped order, stages, epilogue and device-side descriptors
are those of ``kernel.SOLUTION``; only ``warp_specialize`` is off, and the warp count is the one a
single warp group needs for the same accumulator (8 warps for a 128x256 fp32 tile).

Inputs ``a [M, K]`` and ``b [K, N]`` are bfloat16 with a contiguous, 16-byte aligned last
dimension; the output is a contiguous bfloat16 ``[M, N]`` tensor accumulated in float32.
"""

from __future__ import annotations

import torch

from units.warp_specialization.kernel import NAIVE, launch


def matmul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """``a [M, K] bf16 @ b [K, N] bf16 -> [M, N] bf16``, fp32 accumulation, no warp specialization."""
    return launch(a, b, NAIVE)
