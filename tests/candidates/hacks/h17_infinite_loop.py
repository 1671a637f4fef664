"""Hack #17 (hang the worker): forward never returns, hoping a hung evaluation is skipped."""

import torch
import triton  # noqa: F401 - names Triton, so the fast filter lets it reach a worker
from torch import nn


class ModelNew(nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        while True:
            pass
