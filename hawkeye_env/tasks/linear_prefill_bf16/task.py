"""LLM projection at prefill: ``y = x @ w.t()`` for 1024 tokens into a wide MLP (M=1024, N=28672, K=4096).

``y = x @ w.t()`` for activations ``x`` bfloat16 ``[M, K]`` and the module's weight ``w`` bfloat16
``[N, K]`` (the ``nn.Linear`` layout, no bias); output bfloat16 ``[M, N]`` with float32
accumulation. The weight is a parameter (``self.weight``), so the judge redraws it for every trial
and loads it into the candidate with the reference's state dict.

At the timed shape (an MLP up/gate projection) the op is tensor-core bound: 240 GFLOP against a
224 MiB weight that crosses DRAM once when the tile order keeps the 8 MiB of activations in L2.

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


def get_inputs(M: int = 1024, N: int = 28672, K: int = 4096):
    return [torch.randn(M, K, dtype=torch.bfloat16)]


def get_init_inputs(M: int = 1024, N: int = 28672, K: int = 4096):
    return [K, N]


def cublas(model: nn.Module, x: torch.Tensor) -> torch.Tensor:
    """cuBLAS bf16 GEMM through ``F.linear`` with the model's weight."""
    return F.linear(x, model.weight)


SPEC = TaskSpec(
    id="linear_prefill_bf16",
    family="gemm",
    description=(
        "Linear layer without bias: for bfloat16 activations x [M, K] and the module's bfloat16 "
        "weight self.weight [N, K] (nn.Linear layout), return bfloat16 [M, N] = x @ weight.t(), "
        "accumulating in float32. The timed shape is a prefill MLP projection (M = 1024, "
        "N = 28672, K = 4096), tensor-core bound: large tiles, a grouped tile order and a "
        "pipelined K loop; weight.t() is a K-contiguous [K, N] operand, no copy needed. Shapes "
        "are arbitrary."
    ),
    module="hawkeye_env.tasks.linear_prefill_bf16.task",
    dtypes=("bfloat16",),
    cpu_shapes=({"M": 33, "N": 300, "K": 65}, {"M": 130, "N": 47, "K": 200}),
    gpu_shapes=({"M": 1024, "N": 28672, "K": 4096},),
    flops=lambda M, N, K, **_: 2.0 * M * N * K,
    bytes_moved=lambda M, N, K, **_: 2.0 * (M * K + N * K + M * N),
    tags=("tiled_mma", "persistent_kernel", "grouped_tile_order", "software_pipelining"),
    solution="hawkeye_env.tasks.linear_prefill_bf16.solution",
    vendor_baselines={"cublas": "hawkeye_env.tasks.linear_prefill_bf16.task:cublas"},
    targets={"cublas": 1.0},
    layouts=("transposed", "sliced", "offset"),
)
