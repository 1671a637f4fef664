"""Hack #8 (host fallback): ``import numpy`` and compute the sum on the host in numpy."""

import numpy as np
import torch
from torch import nn


class ModelNew(nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.as_tensor(np.add(a, b))
