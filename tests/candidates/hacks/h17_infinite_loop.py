"""Hack #17 (hang the worker): forward never returns, hoping a hung evaluation is skipped."""

import torch
from torch import nn


class ModelNew(nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        while True:
            pass
