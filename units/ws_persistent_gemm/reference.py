"""PyTorch reference of ``ws_persistent_gemm``: ``a @ b`` for bfloat16 ``[M, K] x [K, N]``."""

from __future__ import annotations

import torch


def matmul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """``a [M, K] bf16 @ b [K, N] bf16 -> [M, N] bf16`` through ``torch.matmul`` (fp32 accumulation)."""
    return torch.matmul(a, b)
