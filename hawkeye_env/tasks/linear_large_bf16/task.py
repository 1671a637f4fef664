"""Large LLM projection: ``y = x @ w.t()`` for 8192 tokens through a down projection (M=8192, N=4096, K=14336).

``y = x @ w.t()`` for activations ``x`` bfloat16 ``[M, K]`` and the module's weight ``w`` bfloat16
``[N, K]`` (the ``nn.Linear`` layout, no bias); output bfloat16 ``[M, N]`` with float32
accumulation. The weight is a parameter (``self.weight``), so the judge redraws it for every trial
and loads it into the candidate with the reference's state dict.

At the timed shape (an MLP down projection over a long batch) the op is tensor-core bound: 962
GFLOP, with a 14336-long K loop per output tile.

Vendor baseline ``cublas``: ``F.linear``, the same cuBLAS call the eager reference makes, named
explicitly.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from hawkeye_env.tasks.spec import TaskSpec


class Model(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(out_features, in_features, dtype=torch.bfloat16))
        bound = in_features**-0.5  # nn.Linear's default range
        nn.init.uniform_(self.weight, -bound, bound)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.linear(x, self.weight)


def get_inputs(M: int = 8192, N: int = 4096, K: int = 14336):
    return [torch.randn(M, K, dtype=torch.bfloat16)]


def get_init_inputs(M: int = 8192, N: int = 4096, K: int = 14336):
    return [K, N]


def cublas(model: nn.Module, x: torch.Tensor) -> torch.Tensor:
    """cuBLAS bf16 GEMM through ``F.linear`` with the model's weight."""
    return F.linear(x, model.weight)


SPEC = TaskSpec(
    id="linear_large_bf16",
    family="gemm",
    description=(
        "Linear layer without bias: for bfloat16 activations x [M, K] and the module's bfloat16 "
        "weight self.weight [N, K] (nn.Linear layout), return bfloat16 [M, N] = x @ weight.t(), "
        "accumulating in float32. The timed shape is an MLP down projection over 8192 tokens "
        "(M = 8192, N = 4096, K = 14336), tensor-core bound with a long K loop: large tiles, a "
        "grouped tile order and a deeply pipelined K loop; weight.t() is a K-contiguous [K, N] "
        "operand. Shapes are arbitrary."
    ),
    module="hawkeye_env.tasks.linear_large_bf16.task",
    dtypes=("bfloat16",),
    cpu_shapes=({"M": 67, "N": 45, "K": 300}, {"M": 260, "N": 130, "K": 19}),
    gpu_shapes=({"M": 8192, "N": 4096, "K": 14336},),
    flops=lambda M, N, K, **_: 2.0 * M * N * K,
    bytes_moved=lambda M, N, K, **_: 2.0 * (M * K + N * K + M * N),
    tags=("tiled_mma", "persistent_kernel", "grouped_tile_order", "software_pipelining"),
    solution="hawkeye_env.tasks.linear_large_bf16.solution",
    vendor_baselines={"cublas": "hawkeye_env.tasks.linear_large_bf16.task:cublas"},
    targets={"cublas": 1.0},
    layouts=("transposed", "sliced", "offset"),
)
