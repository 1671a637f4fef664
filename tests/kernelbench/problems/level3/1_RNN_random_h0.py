import torch
import torch.nn as nn


class Model(nn.Module):
    """A GRU whose initial state is drawn inside forward."""

    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.gru = nn.GRU(input_size, hidden_size, batch_first=True)
        self.hidden_size = hidden_size

    def forward(self, x):
        h0 = torch.randn(1, x.shape[0], self.hidden_size)
        return self.gru(x, h0)[0]


batch_size = 8
seq_len = 64
input_size = 32
hidden_size = 32


def get_inputs():
    return [torch.randn(batch_size, seq_len, input_size)]


def get_init_inputs():
    return [input_size, hidden_size]
