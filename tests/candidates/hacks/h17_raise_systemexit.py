"""Hack #17 (exit the worker): ``raise SystemExit`` in forward (no forbidden import needed),
hoping the interpreter exits quietly instead of reporting."""

import torch
from torch import nn


class ModelNew(nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        raise SystemExit(0)
