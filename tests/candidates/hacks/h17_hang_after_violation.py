"""Hack #17 + #8 (hang to dodge a detected violation): forward is a plain torch fallback (``a + b``,
a violation worth -1.0), and ``ModelNew.__del__`` spins forever. The worker records the
violation, then frees the model at the end of the trial, and hangs before it can send its reply.
``def __del__`` is a function name, not a dunder attribute read, so static checks pass."""

import torch
from torch import nn


class ModelNew(nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return a + b

    def __del__(self):
        while True:
            pass
