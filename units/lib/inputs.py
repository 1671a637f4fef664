"""Input builders shared by units that compute the same problem (``make_inputs`` in their meta)."""

from __future__ import annotations

import torch


def bf16_matmul_inputs(shape, device: str, seed: int) -> tuple:
    """``(a [M, K], b [K, N])`` for ``shape = {"M", "N", "K"}``: standard-normal bfloat16 matrices,
    contiguous, drawn on the CPU under ``seed`` so every device sees the same values."""
    g = torch.Generator(device="cpu").manual_seed(seed)
    a = torch.randn(shape["M"], shape["K"], generator=g)
    b = torch.randn(shape["K"], shape["N"], generator=g)
    return a.to(device=device, dtype=torch.bfloat16), b.to(device=device, dtype=torch.bfloat16)
