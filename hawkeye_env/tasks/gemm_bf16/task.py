"""Matrix multiply of two bfloat16 matrices: ``out = a @ b``.

Inputs ``a`` is bfloat16 ``[M, K]`` and ``b`` is bfloat16 ``[K, N]``; the output is bfloat16
``[M, N]`` (products accumulated in float32, rounded to bfloat16 once).
"""

from __future__ import annotations

import torch
from torch import nn

from hawkeye_env.tasks.spec import Dim, ShapeFamily, TaskSpec


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return a @ b


def get_inputs(M: int = 4096, N: int = 4096, K: int = 4096):
    return [torch.randn(M, K, dtype=torch.bfloat16), torch.randn(K, N, dtype=torch.bfloat16)]


def get_init_inputs(M: int = 4096, N: int = 4096, K: int = 4096):
    return []


SPEC = TaskSpec(
    id="gemm_bf16",
    family="gemm",
    description=(
        "Multiply a bfloat16 matrix a of shape [M, K] by a bfloat16 matrix b of shape [K, N] "
        "and return the bfloat16 [M, N] product, accumulating in float32. M, N and K are "
        "arbitrary (not necessarily multiples of a tile size) and the inputs may be "
        "non-contiguous views, so respect their strides. At large sizes the op is compute "
        "bound: use tensor-core tiles (tl.dot), a grouped tile order for L2 reuse, and a "
        "software-pipelined K loop."
    ),
    module="hawkeye_env.tasks.gemm_bf16.task",
    dtypes=("bfloat16",),
    cpu_shapes=({"M": 33, "N": 47, "K": 65}, {"M": 64, "N": 64, "K": 64}),
    gpu_shapes=({"M": 4096, "N": 4096, "K": 4096},),
    flops=lambda M, N, K, **_: 2.0 * M * N * K,
    bytes_moved=lambda M, N, K, **_: 2.0 * (M * K + K * N + M * N),
    tags=("tiled_mma", "grouped_tile_order", "software_pipelining"),
    solution="hawkeye_env.tasks.gemm_bf16.solution",
    vendor_baselines={"cublas": "hawkeye_env.tasks.gemm_8192_bf16.task:cublas"},
    targets={"cublas": 1.0},
    shape_family=ShapeFamily(cpu={"M": Dim(1, 65), "N": Dim(1, 65), "K": Dim(1, 65)},
                             gpu={"M": Dim(1, 4096), "N": Dim(1, 4096), "K": Dim(1, 4096)}),
    layouts=("transposed", "sliced", "expanded", "offset"),
)
