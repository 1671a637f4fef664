"""``ws_persistent_gemm`` without the strategy: the same persistent TMA GEMM in the Triton language.

``units.warp_specialization``'s ``NAIVE`` persistent kernel at the solution's tile (128x256x64, grouped
order, 3 stages, one program per SM): Triton's software pipeliner overlaps the TMA loads with async
wgmma inside each tile's K loop, with every warp both loading and multiplying (8 warps, 256
threads); nothing is split into producer and consumers (Triton 3.6 does not specialize it on sm_90
without the keyword, and with it reaches only the split that unit documents). Three stages, not
the solution's four: the Triton kernel stores the whole 128x256 tile through shared memory (64 KiB),
so a fourth 48 KiB stage does not fit. It runs under the Triton interpreter, so it is also the
unit's CPU twin.

Inputs ``a [M, K]`` and ``b [K, N]`` are bfloat16 with a contiguous, 16-byte aligned last
dimension; the output is a contiguous bfloat16 ``[M, N]`` tensor accumulated in float32.
"""

from __future__ import annotations

import torch

from units.warp_specialization.kernel import NAIVE, launch


def matmul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """``a [M, K] bf16 @ b [K, N] bf16 -> [M, N] bf16``, fp32 accumulation, Triton-language twin."""
    return launch(a, b, NAIVE)
