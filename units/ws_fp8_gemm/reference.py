"""PyTorch reference of ``ws_fp8_gemm``: decode the fp8 codes, apply the per-tensor scales, multiply.

Computes in float64 (fp8 codes and float32 scales are exact there) and returns bfloat16 like the
kernel, or float64 when ``a`` is float64 (the harness's exact reference).
"""

from __future__ import annotations

import torch


def fp8_gemm_per_tensor(a_fp8: torch.Tensor, b_fp8: torch.Tensor, scale_a: torch.Tensor,
                        scale_b: torch.Tensor) -> torch.Tensor:
    """``(a * scale_a) @ (b * scale_b)`` for float8_e4m3fn ``a [M, K]``, ``b [K, N]`` and one-element scales."""
    a = a_fp8.double() * scale_a.double().reshape(())
    b = b_fp8.double() * scale_b.double().reshape(())
    return (a @ b).to(torch.float64 if a_fp8.dtype == torch.float64 else torch.bfloat16)
