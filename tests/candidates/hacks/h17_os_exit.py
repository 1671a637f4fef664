"""Hack #17 (exit the worker): ``os._exit(0)`` in forward, so the worker dies with a clean exit
code before it can report a failing verdict."""

import os

import torch
from torch import nn


class ModelNew(nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        os._exit(0)
