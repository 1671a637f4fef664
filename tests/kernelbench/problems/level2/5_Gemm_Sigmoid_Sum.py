import torch
import torch.nn as nn


class Model(nn.Module):
    """Linear layer, sigmoid, then the sum over features."""

    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.linear = nn.Linear(input_size, hidden_size)

    def forward(self, x):
        x = torch.sigmoid(self.linear(x))
        return torch.sum(x, dim=1, keepdim=True)


batch_size = 128
input_size = 512
hidden_size = 256


def get_inputs():
    return [torch.randn(batch_size, input_size)]


def get_init_inputs():
    return [input_size, hidden_size]
