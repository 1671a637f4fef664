"""Expert solution for ``attention_bf16``: flash attention without a mask.

``units.online_softmax.attention.flash_attention`` with ``causal=False``: one program per 128
queries of a (batch, head) streams all keys in 64-key blocks with an online softmax in float32;
only the last, partial key block is masked.
"""

from __future__ import annotations

import torch
from torch import nn

from units.online_softmax.attention import flash_attention


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        return flash_attention(q, k, v, causal=False)
