"""Expert solution for ``gemm_bias_gelu_bf16``: the ``epilogue_fusion`` unit's kernel.

``units.epilogue_fusion.kernel.linear_gelu`` is a tiled ``tl.dot`` GEMM (float32 accumulator,
grouped tile order) that adds the bias and applies tanh-GELU to the accumulator in registers
before its single bfloat16 store.
"""

from __future__ import annotations

import torch
from torch import nn

from units.epilogue_fusion.kernel import linear_gelu


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
        return linear_gelu(a, b, bias)
