"""Skinny bfloat16 matrix multiply: ``out = a @ b`` with few rows and a long K (M=64, K=16384).

Inputs ``a`` bfloat16 ``[M, K]`` and ``b`` bfloat16 ``[K, N]``; output bfloat16 ``[M, N]``. At the
GPU shape only 32 output tiles of 64x128 exist for 132 SMs, so a plain tiled GEMM leaves most of
the GPU idle: the work must be split along K as well.
"""

from __future__ import annotations

import torch
from torch import nn

from hawkeye_env.tasks.spec import TaskSpec


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return a @ b


def get_inputs(M: int = 64, N: int = 4096, K: int = 16384):
    return [torch.randn(M, K, dtype=torch.bfloat16), torch.randn(K, N, dtype=torch.bfloat16)]


def get_init_inputs(M: int = 64, N: int = 4096, K: int = 16384):
    return []


SPEC = TaskSpec(
    id="gemm_skinny_bf16",
    family="gemm",
    description=(
        "Multiply bfloat16 a [M, K] by bfloat16 b [K, N] and return the bfloat16 [M, N] product, "
        "accumulating in float32. The timed shape is skinny (M=64, N=4096, K=16384): too few output "
        "tiles to fill the GPU, so split K across programs (or run a persistent kernel) and reduce "
        "the float32 partials deterministically. Shapes are arbitrary; respect strides."
    ),
    module="hawkeye_env.tasks.gemm_skinny_bf16.task",
    dtypes=("bfloat16",),
    cpu_shapes=({"M": 5, "N": 40, "K": 1100}, {"M": 33, "N": 130, "K": 600}),
    gpu_shapes=({"M": 64, "N": 4096, "K": 16384},),
    flops=lambda M, N, K, **_: 2.0 * M * N * K,
    bytes_moved=lambda M, N, K, **_: 2.0 * (M * K + K * N + M * N),
    tags=("split_k", "persistent_kernel", "tiled_mma"),
    solution="hawkeye_env.tasks.gemm_skinny_bf16.solution",
    vendor_baselines={"cublas": "hawkeye_env.tasks.gemm_8192_bf16.task:cublas"},
    targets={"cublas": 1.0},
    layouts=("transposed", "sliced", "offset"),
)
