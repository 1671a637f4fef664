import torch
import torch.nn as nn


class Model(nn.Module):
    """Sum over one dimension, keeping it."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return torch.sum(x, dim=self.dim, keepdim=True)


sizes = [16, 256, 256]
reduce_dim = 1


def get_inputs():
    return [torch.randn(*sizes)]


def get_init_inputs():
    return [reduce_dim]
