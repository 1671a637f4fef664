"""Large square bfloat16 matrix multiply: ``out = a @ b`` at M = N = K = 8192.

Inputs ``a`` bfloat16 ``[M, K]`` and ``b`` bfloat16 ``[K, N]``; output bfloat16 ``[M, N]``
(products accumulated in float32, rounded once). The conformance task ``gemm_bf16`` is the same
op at 4096^3; at 8192^3 B alone (128 MB) is 2.5x the H200's 50 MB L2, so the order in which
tiles are visited decides how often A and B strips come back from DRAM.

Vendor baseline ``cublas``: ``torch.matmul``, the same cuBLAS call the eager reference makes,
named explicitly.
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


def get_inputs(M: int = 8192, N: int = 8192, K: int = 8192):
    return [torch.randn(M, K, dtype=torch.bfloat16), torch.randn(K, N, dtype=torch.bfloat16)]


def get_init_inputs(M: int = 8192, N: int = 8192, K: int = 8192):
    return []


def cublas(model: nn.Module, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """cuBLAS bf16 GEMM through ``torch.matmul``."""
    return torch.matmul(a, b)


SPEC = TaskSpec(
    id="gemm_8192_bf16",
    family="gemm",
    description=(
        "Multiply a bfloat16 matrix a [M, K] by a bfloat16 matrix b [K, N] and return the bfloat16 "
        "[M, N] product, accumulating in float32. The timed shape is M = N = K = 8192 (a 1.1 TFLOP "
        "problem, tensor-core bound); shapes are arbitrary and inputs may be strided views. Use "
        "large tensor-core tiles, an L2-aware (grouped) tile order, a software-pipelined K loop, "
        "and on Hopper TMA loads and warp specialization."
    ),
    module="hawkeye_env.tasks.gemm_8192_bf16.task",
    dtypes=("bfloat16",),
    cpu_shapes=({"M": 33, "N": 47, "K": 65}, {"M": 130, "N": 260, "K": 72}),
    gpu_shapes=({"M": 8192, "N": 8192, "K": 8192},),
    flops=lambda M, N, K, **_: 2.0 * M * N * K,
    bytes_moved=lambda M, N, K, **_: 2.0 * (M * K + K * N + M * N),
    tags=("tiled_mma", "grouped_tile_order", "software_pipelining", "tma", "warp_specialization"),
    solution="hawkeye_env.tasks.gemm_8192_bf16.solution",
    vendor_baselines={"cublas": "hawkeye_env.tasks.gemm_8192_bf16.task:cublas"},
    targets={"cublas": 1.0},
    layouts=("transposed", "sliced", "offset"),
)
