"""FP8 e4m3 GEMM with per-tensor scales: ``out = (a * scale_a) @ (w * scale_w)^T`` in bfloat16.

Inputs: ``a`` float8_e4m3fn ``[M, K]`` (activations), ``w`` float8_e4m3fn ``[N, K]`` (a weight in
the ``nn.Linear`` layout, so ``w.t()`` is the K-major ``[K, N]`` operand fp8 tensor cores read),
``scale_a`` and ``scale_w`` float32 ``[1]``. Output bfloat16 ``[M, N]``. The reference dequantizes
to float32 in PyTorch and multiplies.

Redraws: the judge redraws every floating input, fp8 ones included (a float32 draw cast to
float8_e4m3fn, which saturates at +-448 on CPU), and the scales with them. Any real scale, negative
or tiny, is still a well-posed problem (the product is linear in each scale), so the reference
uses the scales as given. ``heavy_tailed`` is left out: a Student-t draw beyond 448 would saturate
(or turn NaN where the cast does not saturate), which real quantized operands never hold since
their scale is ``amax / 448``.

Vendor baselines: ``scaled_mm`` is ``torch._scaled_mm`` with the two tensor-wise scales (cuBLAS
fp8 on sm_90; unavailable where torch rejects the call); ``cublas_bf16`` is the bf16 cuBLAS GEMM
of the same shape, see ``hawkeye_env.tasks.shared.gemm_baselines`` for its cached operands.
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
        out = (a.to(compute) * scale_a) @ (w.to(compute) * scale_w).t()
        return out if compute == torch.float64 else out.to(torch.bfloat16)


def get_inputs(M: int = 8192, N: int = 8192, K: int = 8192):
    return [
        torch.randn(M, K).to(torch.float8_e4m3fn),
        torch.randn(N, K).to(torch.float8_e4m3fn),
        torch.rand(1) / 448.0,
        torch.rand(1) / 448.0,
    ]


def get_init_inputs(M: int = 8192, N: int = 8192, K: int = 8192):
    return []


def scaled_mm(model: nn.Module, a: torch.Tensor, w: torch.Tensor, scale_a: torch.Tensor,
              scale_w: torch.Tensor) -> torch.Tensor:
    """fp8 ``torch._scaled_mm`` with tensor-wise scales."""
    return gemm_baselines.scaled_mm(a, w.t(), scale_a, scale_w)


def cublas_bf16(model: nn.Module, a: torch.Tensor, w: torch.Tensor, scale_a: torch.Tensor,
                scale_w: torch.Tensor) -> torch.Tensor:
    """A bf16 cuBLAS GEMM ``[M, K] x [K, N]`` (``torch.matmul`` of the dequantized ``a`` and
    ``w.t()``), on bf16 operands dequantized from the first call's inputs and cached per model and
    shape (``gemm_baselines.bf16_operands``): it times the bf16 GEMM only."""
    a16, w16 = gemm_baselines.bf16_operands(
        model, gemm_baselines.shape_key(a, w), lambda: (a.float() * scale_a, w.float() * scale_w)
    )
    return torch.matmul(a16, w16.t())


SPEC = TaskSpec(
    id="fp8_gemm_per_tensor",
    family="gemm",
    description=(
        "Compute (a * scale_a) @ (w * scale_w)^T for float8_e4m3fn a [M, K] and w [N, K] (the "
        "nn.Linear weight layout) with float32 one-element scales scale_a and scale_w, returning "
        "bfloat16 [M, N]. Accumulate in float32 and apply the scales once in the epilogue. Feed "
        "the fp8 operands to tensor cores directly (tl.dot on fp8: twice the bf16 rate on Hopper); "
        "w.t() is already K-major. Scales may be any real number, including negative."
    ),
    module="hawkeye_env.tasks.fp8_gemm_per_tensor.task",
    dtypes=("float8_e4m3fn", "float32", "bfloat16"),
    cpu_shapes=({"M": 67, "N": 45, "K": 200}, {"M": 150, "N": 260, "K": 48}),
    gpu_shapes=({"M": 8192, "N": 8192, "K": 8192},),
    flops=lambda M, N, K, **_: 2.0 * M * N * K,
    bytes_moved=lambda M, N, K, **_: 1.0 * (M * K + N * K) + 2.0 * M * N,
    tags=("fp8_gemm", "tiled_mma"),
    mma_operands=FP8_OPERANDS,
    distributions=("normal", "uniform"),
    solution="hawkeye_env.tasks.fp8_gemm_per_tensor.solution",
    vendor_baselines={
        "scaled_mm": "hawkeye_env.tasks.fp8_gemm_per_tensor.task:scaled_mm",
        "cublas_bf16": "hawkeye_env.tasks.fp8_gemm_per_tensor.task:cublas_bf16",
    },
    targets={"scaled_mm": 1.0},
    layouts=("transposed", "sliced", "offset"),
)
