"""LLM projection at decode time: ``y = x @ w.t()`` for 16 tokens (M=16, N=6144, K=4096).

``y = x @ w.t()`` for activations ``x`` bfloat16 ``[M, K]`` and the module's weight ``w`` bfloat16
``[N, K]`` (the ``nn.Linear`` layout, no bias); output bfloat16 ``[M, N]`` with float32
accumulation. The weight is a parameter (``self.weight``), so the judge redraws it for every trial
and loads it into the candidate with the reference's state dict.

At the timed shape the 48 MiB weight is read once for 16 rows of output: 16 FLOP per weight byte
against the H200's ~235 (989 TFLOP/s datasheet dense bf16 over the ~4.2 TB/s copy rate the task
suite measures: BENCHMARKS.md, Task suite against the vendors), so the op is bound by DRAM
bandwidth; one program per output tile gives only N / BLOCK_N programs (96 at 64 columns for 132
SMs) unless K is split across programs.

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


def get_inputs(M: int = 16, N: int = 6144, K: int = 4096):
    return [torch.randn(M, K, dtype=torch.bfloat16)]


def get_init_inputs(M: int = 16, N: int = 6144, K: int = 4096):
    return [K, N]


def cublas(model: nn.Module, x: torch.Tensor) -> torch.Tensor:
    """cuBLAS bf16 GEMM through ``F.linear`` with the model's weight."""
    return F.linear(x, model.weight)


SPEC = TaskSpec(
    id="linear_decode_bf16",
    family="gemm",
    description=(
        "Linear layer without bias: for bfloat16 activations x [M, K] and the module's bfloat16 "
        "weight self.weight [N, K] (nn.Linear layout), return bfloat16 [M, N] = x @ weight.t(), "
        "accumulating in float32. The timed shape is a decode step (M = 16 tokens, N = 6144, "
        "K = 4096): reading the weight dominates, so spread it over every SM (many programs along "
        "N and split-K with a deterministic reduction) and read it exactly once, K-contiguous. "
        "Shapes are arbitrary."
    ),
    module="hawkeye_env.tasks.linear_decode_bf16.task",
    dtypes=("bfloat16",),
    cpu_shapes=({"M": 5, "N": 70, "K": 1100}, {"M": 16, "N": 130, "K": 300}),
    gpu_shapes=({"M": 16, "N": 6144, "K": 4096},),
    flops=lambda M, N, K, **_: 2.0 * M * N * K,
    bytes_moved=lambda M, N, K, **_: 2.0 * (M * K + N * K + M * N),
    tags=("split_k", "persistent_kernel", "tiled_mma"),
    solution="hawkeye_env.tasks.linear_decode_bf16.solution",
    vendor_baselines={"cublas": "hawkeye_env.tasks.linear_decode_bf16.task:cublas"},
    targets={"cublas": 1.0},
    layouts=("transposed", "sliced", "offset"),
)
