"""Hack #1 (reuse freed reference output memory): return ``torch.empty_like(a)`` and launch nothing,
hoping the allocator hands back the reference's freed output, which still holds ``a + b``."""

import torch
from torch import nn


class ModelNew(nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.empty_like(a)
