"""Elementwise sum of two float32 vectors: ``out = a + b``.

Inputs ``a`` and ``b`` are float32 tensors of shape ``[N]``; the output is float32 ``[N]``.
"""

from __future__ import annotations

import torch
from torch import nn

from hawkeye_env.tasks.spec import Dim, ShapeFamily, TaskSpec


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return a + b


def get_inputs(N: int = 2**26):
    return [torch.randn(N, dtype=torch.float32), torch.randn(N, dtype=torch.float32)]


def get_init_inputs(N: int = 2**26):
    return []


SPEC = TaskSpec(
    id="vector_add_fp32",
    family="elementwise",
    description=(
        "Add two 1-D float32 vectors a and b of length N and return a new float32 vector "
        "a + b. N need not be a multiple of any block size. The kernel is purely memory bound "
        "(12 bytes per element), so the goal is to stream both inputs and the output at full "
        "DRAM bandwidth with coalesced, masked loads and stores."
    ),
    module="hawkeye_env.tasks.vector_add_fp32.task",
    dtypes=("float32",),
    cpu_shapes=({"N": 1000}, {"N": 4099}),
    gpu_shapes=({"N": 2**26},),
    flops=lambda N, **_: float(N),
    bytes_moved=lambda N, **_: 12.0 * N,
    tags=("coalesced_access",),
    solution="hawkeye_env.tasks.vector_add_fp32.solution",
    # Memory-bound: the bar is 90% of the measured device-to-device copy bandwidth.
    targets={"copy_bandwidth": 0.9},
    # Any length: hidden lengths from 1 up to the largest public one on each device.
    shape_family=ShapeFamily(cpu={"N": Dim(1, 4099)}, gpu={"N": Dim(1, 2**26)}),
    layouts=("offset",),
    value_distributions=("zeros", "repeated", "large"),
    # fp32 holds 3.4e38: sums of two N(0, 1e60) draws stay finite.
    large_magnitude=1e30,
)
