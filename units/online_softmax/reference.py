"""PyTorch reference of ``online_softmax``: ``softmax(x, dim=-1)`` for ``x [M, N]`` (dtype kept)."""

from __future__ import annotations

import torch


def softmax(x: torch.Tensor) -> torch.Tensor:
    """Row softmax of ``x [M, N]``."""
    return torch.softmax(x, dim=-1)
