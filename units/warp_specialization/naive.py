"""``warp_specialization`` without the strategy: ``kernel.NAIVE``, the solution's GEMM without the keyword.

The same persistent kernel (one program per SM striding over output tiles, TMA descriptor loads,
grouped tile order, 3 stages, whole-tile epilogue), with its tile loop not specialized: every warp
both waits for TMA tiles and issues wgmma, and the software pipeliner, which pipelines the inner K
loop only, drains at the end of every tile and refills at the start of the next, so the epilogue's
convert and store overlap no loads. Only ``warp_specialize`` is off, and the warp count is the one
a single warp group needs for the same accumulator (8 warps for a 128x256 fp32 tile).

Inputs ``a [M, K]`` and ``b [K, N]`` are bfloat16 with a contiguous, 16-byte aligned last
dimension; the output is a contiguous bfloat16 ``[M, N]`` tensor accumulated in float32.
"""

from __future__ import annotations

import torch

from units.warp_specialization.kernel import NAIVE, launch


def matmul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """``a [M, K] bf16 @ b [K, N] bf16 -> [M, N] bf16``, fp32 accumulation, no warp specialization."""
    return launch(a, b, NAIVE)
