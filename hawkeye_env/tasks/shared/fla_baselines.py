"""Calling FLA's chunk kernels as vendor baselines of the linear-attention tasks.

The tasks lay tensors out as ``[B, H, T, D]``; FLA takes ``[B', T, H', D]``. Heads are independent,
so ``heads_as_batch`` passes a contiguous ``[B, H, T, D]`` tensor without a copy as ``B' = B * H``
sequences of one head each, and ``from_heads_as_batch`` turns FLA's output back.
"""

from __future__ import annotations

import importlib

import torch

from hawkeye_env.tasks.spec import BaselineUnavailable

FLA_MISSING = "flash-linear-attention is not installed: pip install 'hawkeye-env[fla]'"


def fla_kernel(module: str, name: str, device: torch.device):
    """``fla.ops.<module>.<name>``, or ``BaselineUnavailable`` (FLA missing, or not on CUDA)."""
    try:
        fn = getattr(importlib.import_module(f"fla.ops.{module}"), name)
    except (ImportError, AttributeError):
        raise BaselineUnavailable(FLA_MISSING) from None
    if device.type != "cuda":
        raise BaselineUnavailable(f"FLA's Triton kernels need a CUDA device, got {device.type}")
    return fn


def heads_as_batch(x: torch.Tensor) -> torch.Tensor:
    """``[B, H, T, ...]`` -> ``[B * H, T, 1, ...]`` (a view of a contiguous tensor)."""
    b, h, t_len = x.shape[:3]
    return x.reshape(b * h, t_len, 1, *x.shape[3:])


def from_heads_as_batch(o: torch.Tensor, b: int, h: int) -> torch.Tensor:
    """FLA's ``[B * H, T, 1, D]`` output -> ``[B, H, T, D]``."""
    return o.reshape(b, h, o.shape[1], o.shape[-1])
