import torch
import torch.nn as nn


class Model(nn.Module):
    """Linear layer called through a closure, then sigmoid and scaling."""

    def __init__(self, in_features, out_features, scaling_factor):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)
        self.project = lambda y: self.fc(y)
        self.scaling_factor = scaling_factor

    def forward(self, x):
        return torch.sigmoid(self.project(x)) * self.scaling_factor


batch_size = 128
in_features = 512
out_features = 256
scaling_factor = 2.5


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, scaling_factor]
