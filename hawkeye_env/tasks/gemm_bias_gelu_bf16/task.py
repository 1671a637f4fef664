"""Fused linear layer with tanh-GELU: ``out = gelu_tanh(a @ b + bias)`` in bfloat16.

Inputs ``a`` bfloat16 ``[M, K]``, ``b`` bfloat16 ``[K, N]``, ``bias`` bfloat16 ``[N]``; the output
is bfloat16 ``[M, N]``. The reference is PyTorch's ``F.gelu(..., approximate="tanh")``.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from hawkeye_env.tasks.spec import TaskSpec


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
        return F.gelu(a @ b + bias, approximate="tanh")


def get_inputs(M: int = 4096, N: int = 4096, K: int = 4096):
    return [
        torch.randn(M, K, dtype=torch.bfloat16),
        torch.randn(K, N, dtype=torch.bfloat16),
        torch.randn(N, dtype=torch.bfloat16),
    ]


def get_init_inputs(M: int = 4096, N: int = 4096, K: int = 4096):
    return []


SPEC = TaskSpec(
    id="gemm_bias_gelu_bf16",
    family="gemm",
    description=(
        "Compute gelu_tanh(a @ b + bias) for bfloat16 a [M, K], b [K, N] and bias [N], returning "
        "bfloat16 [M, N]; accumulate in float32. GELU is the tanh approximation "
        "(F.gelu(x, approximate='tanh')). Shapes are arbitrary and inputs may be strided views. "
        "Fuse the bias and activation into the GEMM epilogue so the product never round-trips "
        "through DRAM."
    ),
    module="hawkeye_env.tasks.gemm_bias_gelu_bf16.task",
    dtypes=("bfloat16",),
    cpu_shapes=({"M": 33, "N": 47, "K": 65}, {"M": 130, "N": 260, "K": 19}),
    gpu_shapes=({"M": 4096, "N": 4096, "K": 4096},),
    flops=lambda M, N, K, **_: 2.0 * M * N * K,
    bytes_moved=lambda M, N, K, **_: 2.0 * (M * K + K * N + N + M * N),
    tags=("epilogue_fusion", "tiled_mma"),
    solution="hawkeye_env.tasks.gemm_bias_gelu_bf16.solution",
    # No vendor library fuses this epilogue for bf16 here; the fused kernel must at least match
    # torch.compile's (which fuses bias and GELU into a Triton epilogue or a cuBLASLt call).
    targets={"compile": 1.0},
    layouts=("transposed", "sliced", "offset"),
)
