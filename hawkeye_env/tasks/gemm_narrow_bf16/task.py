"""Tall, narrow bfloat16 matrix multiply: ``out = a @ b`` with M = 16384, N = 1024, K = 8192.

Inputs ``a`` bfloat16 ``[M, K]`` and ``b`` bfloat16 ``[K, N]``; output bfloat16 ``[M, N]``
(float32 accumulation). The shape of an MLP down-projection over a long token batch: B (16 MB)
fits in L2 while A (256 MB) streams through once, and only N / BLOCK_N tile columns exist, so the
tile order and the tile shape along N decide the reuse.

Vendor baseline ``cublas``: ``torch.matmul``, named explicitly.
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


def get_inputs(M: int = 16384, N: int = 1024, K: int = 8192):
    return [torch.randn(M, K, dtype=torch.bfloat16), torch.randn(K, N, dtype=torch.bfloat16)]


def get_init_inputs(M: int = 16384, N: int = 1024, K: int = 8192):
    return []


def cublas(model: nn.Module, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """cuBLAS bf16 GEMM through ``torch.matmul``."""
    return torch.matmul(a, b)


SPEC = TaskSpec(
    id="gemm_narrow_bf16",
    family="gemm",
    description=(
        "Multiply bfloat16 a [M, K] by bfloat16 b [K, N] and return the bfloat16 [M, N] product, "
        "accumulating in float32. The timed shape is tall and narrow (M = 16384, N = 1024, "
        "K = 8192): still tensor-core bound, with few tile columns, so pick tiles and a grouped "
        "tile order that keep b resident in L2 while a streams through once. Shapes are "
        "arbitrary and inputs may be strided views."
    ),
    module="hawkeye_env.tasks.gemm_narrow_bf16.task",
    dtypes=("bfloat16",),
    cpu_shapes=({"M": 300, "N": 40, "K": 65}, {"M": 67, "N": 130, "K": 200}),
    gpu_shapes=({"M": 16384, "N": 1024, "K": 8192},),
    flops=lambda M, N, K, **_: 2.0 * M * N * K,
    bytes_moved=lambda M, N, K, **_: 2.0 * (M * K + K * N + M * N),
    tags=("tiled_mma", "grouped_tile_order", "software_pipelining", "tma", "warp_specialization"),
    solution="hawkeye_env.tasks.gemm_narrow_bf16.solution",
    vendor_baselines={"cublas": "hawkeye_env.tasks.gemm_narrow_bf16.task:cublas"},
    targets={"cublas": 1.0},
    layouts=("transposed", "sliced", "offset"),
)
