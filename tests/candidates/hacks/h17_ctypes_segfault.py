"""Hack #17 (crash the worker): dereference address 0 through ``ctypes.string_at`` so the worker
dies with SIGSEGV before it can report."""

import ctypes

import torch
from torch import nn


class ModelNew(nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return ctypes.string_at(0)
