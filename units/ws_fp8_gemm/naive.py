"""``ws_fp8_gemm`` without the strategy: ``units.fp8_scaled_gemm``'s Triton-language fp8 GEMM.

The per-tensor GEMM of that unit in its measured configuration (128x128x128 tiles, 4 stages, 8
warps, grouped order, fp8 ``tl.dot`` with two-level accumulation promoted every 4 K tiles, scales in
the epilogue): every warp both loads and multiplies, the software pipeliner overlapping them inside
one program's K loop. It runs under the Triton interpreter, so it is also the unit's CPU twin.

Inputs as the solution: float8_e4m3fn ``a [M, K]``, ``b [K, N]``, one-element float32 scales;
output bfloat16 ``[M, N]``.
"""

from __future__ import annotations

import torch

from units.fp8_scaled_gemm import kernel as triton_fp8


def fp8_gemm_per_tensor(a_fp8: torch.Tensor, b_fp8: torch.Tensor, scale_a: torch.Tensor,
                        scale_b: torch.Tensor) -> torch.Tensor:
    """``(a * scale_a) @ (b * scale_b) -> [M, N] bf16``, the Triton-language kernel."""
    return triton_fp8.fp8_gemm_per_tensor(a_fp8, b_fp8, scale_a, scale_b)
