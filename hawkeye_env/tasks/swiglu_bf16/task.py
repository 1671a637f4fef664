"""SwiGLU activation: ``out = silu(gate) * up`` where ``x = [gate | up]`` is bfloat16 ``[M, 2N]``.

The input is the fused gate/up projection's output, split in halves along the last dimension;
the output is bfloat16 ``[M, N]``. The reference computes in bfloat16 as PyTorch would.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from hawkeye_env.tasks.spec import TaskSpec


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        gate, up = x.chunk(2, dim=-1)
        return F.silu(gate) * up


def get_inputs(M: int = 8192, N: int = 14336):
    return [torch.randn(M, 2 * N, dtype=torch.bfloat16)]


def get_init_inputs(M: int = 8192, N: int = 14336):
    return []


SPEC = TaskSpec(
    id="swiglu_bf16",
    family="elementwise",
    description=(
        "SwiGLU: for bfloat16 x [M, 2N], with gate = x[:, :N] and up = x[:, N:], return bfloat16 "
        "[M, N] equal to silu(gate) * up = gate * sigmoid(gate) * up, computed in float32. N is "
        "arbitrary. Purely memory bound: read x once, write the output once, coalesced."
    ),
    module="hawkeye_env.tasks.swiglu_bf16.task",
    dtypes=("bfloat16",),
    cpu_shapes=({"M": 7, "N": 1000}, {"M": 33, "N": 65}),
    gpu_shapes=({"M": 8192, "N": 14336},),
    flops=lambda M, N, **_: 6.0 * M * N,
    bytes_moved=lambda M, N, **_: 2.0 * (2 * M * N + M * N),
    tags=("coalesced_access",),
    solution="hawkeye_env.tasks.swiglu_bf16.solution",
    # Memory-bound: the bar is 90% of the measured device-to-device copy bandwidth.
    targets={"copy_bandwidth": 0.9},
    layouts=("offset",),
)
