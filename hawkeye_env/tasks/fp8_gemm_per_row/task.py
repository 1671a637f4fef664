"""FP8 e4m3 GEMM with per-token and per-channel scales:
``out[m, n] = scale_a[m] * scale_w[n] * sum_k a[m, k] w[n, k]`` in bfloat16.

Inputs: ``a`` float8_e4m3fn ``[M, K]`` (activations, one scale per row: per token), ``w``
float8_e4m3fn ``[N, K]`` (a weight in the ``nn.Linear`` layout, one scale per output channel),
``scale_a`` float32 ``[M]``, ``scale_w`` float32 ``[N]``. Output bfloat16 ``[M, N]``. The reference
dequantizes to float32 in PyTorch and multiplies (float64 when the judge evaluates it exactly).

Redraws, as for ``fp8_gemm_per_tensor``: the judge redraws every floating input, fp8 ones
included (a float32 draw cast to float8_e4m3fn, every code a finite e4m3 value), and the scales
with them; any real scale is a well-posed problem (the product is linear in each scale), so the
reference uses the scales as given. ``heavy_tailed`` is left out: a Student-t draw beyond 448
would saturate (or turn NaN where the cast does not saturate), which real quantized operands never
hold since each scale is ``amax / 448`` of its row.

Vendor baseline ``scaled_mm``: ``torch._scaled_mm`` with row-wise scales ``[M, 1]`` and ``[1, N]``
(cuBLAS or CUTLASS on sm_90); unavailable where torch rejects the call.
"""

from __future__ import annotations

import torch
from torch import nn

from hawkeye_env.tasks.shared import gemm_baselines
from hawkeye_env.tasks.spec import FP8_OPERANDS, TaskSpec


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, w: torch.Tensor, scale_a: torch.Tensor, scale_w: torch.Tensor) -> torch.Tensor:
        compute = scale_a.dtype  # float32, or float64 when the judge evaluates the reference exactly
        out = (a.to(compute) * scale_a[:, None]) @ (w.to(compute) * scale_w[:, None]).t()
        return out if compute == torch.float64 else out.to(torch.bfloat16)


def get_inputs(M: int = 8192, N: int = 8192, K: int = 8192):
    return [
        torch.randn(M, K).to(torch.float8_e4m3fn),
        torch.randn(N, K).to(torch.float8_e4m3fn),
        torch.rand(M) / 448.0,
        torch.rand(N) / 448.0,
    ]


def get_init_inputs(M: int = 8192, N: int = 8192, K: int = 8192):
    return []


def scaled_mm(model: nn.Module, a: torch.Tensor, w: torch.Tensor, scale_a: torch.Tensor,
              scale_w: torch.Tensor) -> torch.Tensor:
    """fp8 ``torch._scaled_mm`` with row-wise scales (``scale_a[:, None]``, ``scale_w[None, :]``)."""
    return gemm_baselines.scaled_mm(a, w.t(), scale_a[:, None], scale_w[None, :])


SPEC = TaskSpec(
    id="fp8_gemm_per_row",
    family="gemm",
    description=(
        "Compute diag(scale_a) (a @ w^T) diag(scale_w) for float8_e4m3fn a [M, K] and w [N, K] "
        "(the nn.Linear weight layout) with float32 per-row scales scale_a [M] (per token) and "
        "scale_w [N] (per output channel), returning bfloat16 [M, N]. The scales are constant "
        "along K: accumulate the fp8 products in float32 and apply the outer product of the "
        "scales once in the epilogue. Feed the fp8 operands to tensor cores directly (tl.dot on "
        "fp8: twice the bf16 rate on Hopper); w.t() is already K-major. Scales may be any real "
        "number, including negative. Shapes are arbitrary."
    ),
    module="hawkeye_env.tasks.fp8_gemm_per_row.task",
    dtypes=("float8_e4m3fn", "float32", "bfloat16"),
    cpu_shapes=({"M": 67, "N": 45, "K": 200}, {"M": 150, "N": 260, "K": 48}),
    gpu_shapes=({"M": 8192, "N": 8192, "K": 8192}, {"M": 4096, "N": 4096, "K": 4096}),
    flops=lambda M, N, K, **_: 2.0 * M * N * K,
    bytes_moved=lambda M, N, K, **_: 1.0 * (M * K + N * K) + 4.0 * (M + N) + 2.0 * M * N,
    tags=("fp8_gemm", "tiled_mma"),
    mma_operands=FP8_OPERANDS,
    distributions=("normal", "uniform"),
    solution="hawkeye_env.tasks.fp8_gemm_per_row.solution",
    vendor_baselines={"scaled_mm": "hawkeye_env.tasks.fp8_gemm_per_row.task:scaled_mm"},
    targets={"scaled_mm": 1.0},
    layouts=("transposed", "sliced", "offset"),
)
