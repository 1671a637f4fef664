import torch
import torch.nn as nn


class Model(nn.Module):
    """A GRU cell whose initial state is a plain float32 attribute (not a buffer), an MLP whose
    widths are a list constant, and a BatchNorm in training mode."""

    def __init__(self, layer_sizes):
        super().__init__()
        layers = []
        for a, b in zip(layer_sizes[:-1], layer_sizes[1:]):
            layers += [nn.Linear(a, b), nn.ReLU()]
        self.mlp = nn.Sequential(*layers)
        self.norm = nn.BatchNorm1d(layer_sizes[-1])
        self.h0 = torch.randn(1, layer_sizes[-1])

    def forward(self, x):
        return self.norm(self.mlp(x)) + self.h0


batch_size = 64
layer_sizes = [4096, 8192, 4096]


def get_inputs():
    return [torch.randn(batch_size, layer_sizes[0])]


def get_init_inputs():
    return [layer_sizes]
