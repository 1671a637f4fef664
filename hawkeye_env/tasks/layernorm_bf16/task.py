"""LayerNorm over the last dimension of a bfloat16 ``[M, N]`` tensor with affine weight and bias.

``out = (x - mean(x)) / sqrt(var(x) + eps) * weight + bias`` (biased variance, eps = 1e-5), as
``F.layer_norm``; ``weight`` and ``bias`` are bfloat16 ``[N]`` parameters the judge redraws.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from hawkeye_env.tasks.spec import TaskSpec


class Model(nn.Module):
    def __init__(self, hidden_size: int, eps: float = 1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(hidden_size, dtype=torch.bfloat16))
        self.bias = nn.Parameter(torch.zeros(hidden_size, dtype=torch.bfloat16))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.layer_norm(x, (x.shape[-1],), self.weight, self.bias, self.eps)


def get_inputs(M: int = 16384, N: int = 4096):
    return [torch.randn(M, N, dtype=torch.bfloat16)]


def get_init_inputs(M: int = 16384, N: int = 4096):
    return [N]


SPEC = TaskSpec(
    id="layernorm_bf16",
    family="normalization",
    description=(
        "LayerNorm of each row of a bfloat16 [M, N] tensor x with bfloat16 weight [N] and bias [N] "
        "(the module's parameters, self.weight and self.bias) and eps = self.eps: "
        "(x - mean) / sqrt(biased var + eps) * weight + bias, statistics in float32, bfloat16 "
        "output [M, N]. N is arbitrary. The op is memory bound: read x once and write once."
    ),
    module="hawkeye_env.tasks.layernorm_bf16.task",
    dtypes=("bfloat16",),
    cpu_shapes=({"M": 37, "N": 1000}, {"M": 5, "N": 4097}),
    gpu_shapes=({"M": 16384, "N": 4096},),
    flops=lambda M, N, **_: 8.0 * M * N,
    bytes_moved=lambda M, N, **_: 2.0 * (2 * M * N + 2 * N),
    tags=("row_reduction",),
    solution="hawkeye_env.tasks.layernorm_bf16.solution",
    # Memory-bound: the bar is 90% of the measured device-to-device copy bandwidth.
    targets={"copy_bandwidth": 0.9},
    layouts=("offset",),
    value_distributions=("zeros", "repeated", "large"),
    # As rmsnorm_bf16: squares of 1e4 overflow fp16, not fp32.
    large_magnitude=1e4,
)
