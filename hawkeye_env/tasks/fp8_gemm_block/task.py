"""FP8 e4m3 GEMM with 128x128 block scales (DeepSeek-V3 style), bfloat16 output.

``out = (a * S_a) @ (w * S_w)^T`` where every 128x128 block of ``a`` and of ``w`` carries one
float32 scale. Inputs: ``a`` float8_e4m3fn ``[M, K]``, ``w`` float8_e4m3fn ``[N, K]`` (the
``nn.Linear`` layout), ``scale_a`` float32 ``[ceil(M/128), ceil(K/128)]``, ``scale_w`` float32
``[ceil(N/128), ceil(K/128)]``; ``S_a[m, k] = scale_a[m // 128, k // 128]`` and likewise for
``w``. Output bfloat16 ``[M, N]``. The reference dequantizes to float32 in PyTorch (float64 when the
judge evaluates it exactly) and multiplies.

Redraws, as for ``fp8_gemm_per_tensor``: the judge redraws every floating input, fp8 codes and
scales included; every code is a finite e4m3 value and any real scale is a well-posed problem.
``heavy_tailed`` is left out: a Student-t draw beyond 448 would saturate (or turn NaN where the
cast does not saturate), which real quantized blocks never hold since each scale is the block's
``amax / 448``.

Vendor baselines:

- ``scaled_mm``: ``torch._scaled_mm`` with block scales. cuBLAS pairs 128x128 weight blocks with
  1x128 activation blocks, never two 128x128 operands, so the call repeats each activation scale
  over its 128 rows first (``[M, ceil(K/128)]``, outer-dim-major): the same product, plus
  ``4 * M * K / 128`` bytes of scale expansion inside the timed call (2 MiB at 8192^3).
  Unavailable where torch or cuBLAS rejects block scaling (cuBLAS < 12.9, not sm_90, CPU).
- ``cublas_bf16``: the bf16 cuBLAS GEMM of the same shape, the speed a block-scaled fp8 kernel
  must beat; see ``hawkeye_env.tasks.shared.gemm_baselines`` for its cached operands.
"""

from __future__ import annotations

import torch
from torch import nn

from hawkeye_env.tasks.shared import gemm_baselines
from hawkeye_env.tasks.spec import FP8_OPERANDS, TaskSpec

SCALE_BLOCK = 128  # rows and columns per scale (DeepSeek-V3's fp8 recipe)


def dequantize_blocks(x: torch.Tensor, scales: torch.Tensor) -> torch.Tensor:
    """``x [R, C]`` fp8 times its block scales ``[ceil(R/128), ceil(C/128)]``, in ``scales.dtype``."""
    rows, cols = x.shape
    per_element = scales.repeat_interleave(SCALE_BLOCK, 0).repeat_interleave(SCALE_BLOCK, 1)[:rows, :cols]
    return x.to(scales.dtype) * per_element


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, w: torch.Tensor, scale_a: torch.Tensor, scale_w: torch.Tensor) -> torch.Tensor:
        out = dequantize_blocks(a, scale_a) @ dequantize_blocks(w, scale_w).t()
        return out if out.dtype == torch.float64 else out.to(torch.bfloat16)


def _blocks(n: int) -> int:
    return -(-n // SCALE_BLOCK)


def get_inputs(M: int = 8192, N: int = 8192, K: int = 8192):
    return [
        torch.randn(M, K).to(torch.float8_e4m3fn),
        torch.randn(N, K).to(torch.float8_e4m3fn),
        torch.rand(_blocks(M), _blocks(K)) / 448.0,
        torch.rand(_blocks(N), _blocks(K)) / 448.0,
    ]


def get_init_inputs(M: int = 8192, N: int = 8192, K: int = 8192):
    return []


def scaled_mm(model: nn.Module, a: torch.Tensor, w: torch.Tensor, scale_a: torch.Tensor,
              scale_w: torch.Tensor) -> torch.Tensor:
    """fp8 ``torch._scaled_mm``: 1x128 activation scales (``scale_a`` repeated over its 128 rows,
    column-major) with 128x128 weight scales (``scale_w.t()``, row-major ``scale_w`` underneath)."""
    rows = scale_a.repeat_interleave(SCALE_BLOCK, 0)[: a.shape[0]]  # [M, ceil(K/128)]
    return gemm_baselines.scaled_mm(a, w.t(), rows.t().contiguous().t(), scale_w.t())


def cublas_bf16(model: nn.Module, a: torch.Tensor, w: torch.Tensor, scale_a: torch.Tensor,
                scale_w: torch.Tensor) -> torch.Tensor:
    """A bf16 cuBLAS GEMM ``[M, K] x [K, N]`` (``torch.matmul`` of the dequantized ``a`` and
    ``w.t()``), on bf16 operands dequantized from the first call's inputs and cached per model and
    shape (``gemm_baselines.bf16_operands``): it times the bf16 GEMM only."""
    a16, w16 = gemm_baselines.bf16_operands(
        model, gemm_baselines.shape_key(a, w),
        lambda: (dequantize_blocks(a, scale_a.float()), dequantize_blocks(w, scale_w.float())),
    )
    return torch.matmul(a16, w16.t())


SPEC = TaskSpec(
    id="fp8_gemm_block",
    family="gemm",
    description=(
        "Compute (a * S_a) @ (w * S_w)^T for float8_e4m3fn a [M, K] and w [N, K] (nn.Linear "
        "layout) with DeepSeek-V3 style 128x128 block scales: float32 scale_a [ceil(M/128), "
        "ceil(K/128)] and scale_w [ceil(N/128), ceil(K/128)], S_a[m, k] = scale_a[m // 128, "
        "k // 128] (likewise S_w). Return bfloat16 [M, N]. The scales change every 128 along K, so "
        "they cannot wait for the epilogue: take each 128-wide K step's fp8 tensor-core product "
        "(tl.dot on fp8, float32 result), scale it by the outer product of the two blocks' scales "
        "and add it to a float32 accumulator. Scales may be any real number. Shapes are arbitrary."
    ),
    module="hawkeye_env.tasks.fp8_gemm_block.task",
    dtypes=("float8_e4m3fn", "float32", "bfloat16"),
    cpu_shapes=({"M": 67, "N": 45, "K": 200}, {"M": 150, "N": 260, "K": 300}),
    gpu_shapes=({"M": 8192, "N": 8192, "K": 8192}, {"M": 4096, "N": 4096, "K": 4096}),
    flops=lambda M, N, K, **_: 2.0 * M * N * K,
    bytes_moved=lambda M, N, K, **_: (
        1.0 * (M * K + N * K) + 4.0 * (_blocks(M) + _blocks(N)) * _blocks(K) + 2.0 * M * N
    ),
    tags=("fp8_gemm", "tiled_mma"),
    mma_operands=FP8_OPERANDS,
    distributions=("normal", "uniform"),
    solution="hawkeye_env.tasks.fp8_gemm_block.solution",
    vendor_baselines={
        "scaled_mm": "hawkeye_env.tasks.fp8_gemm_block.task:scaled_mm",
        "cublas_bf16": "hawkeye_env.tasks.fp8_gemm_block.task:cublas_bf16",
    },
    targets={"cublas_bf16": 1.0},
    layouts=("transposed", "sliced", "offset"),
)
