"""MXFP4 weight GEMM: ``out = a @ decode(B)`` with ``B [K, N]`` stored in OCP MXFP4.

Inputs: ``a`` bfloat16 ``[M, K]``; ``b_packed`` uint8 ``[K/2, N]`` holding two e2m1 codes per byte
along K (low nibble = even row); ``b_scales`` uint8 ``[K/32, N]``, e8m0 exponents (value
``2^(s - 127)``) shared by 32 consecutive K. Output bfloat16 ``[M, N]``. Decoding is exact in
float32, so the reference decodes in PyTorch and runs a float32 GEMM.

Redraws: the judge redraws ``a`` only; integer tensors keep ``get_inputs``'s values drawn under
the trial seed. Every byte is a valid pair of e2m1 codes, and scales are drawn in [2^-3, 2^3]
(codes 124..130), the exponents a quantizer produces for unit-scale weights.

Vendor baseline ``cublas_bf16``: the bf16 cuBLAS GEMM of the same shape, the speed a weight-only
FP4 kernel must beat; see ``hawkeye_env.tasks.shared.gemm_baselines`` for its cached operand.
"""

from __future__ import annotations

import torch
from torch import nn

from hawkeye_env.tasks.shared import gemm_baselines
from hawkeye_env.tasks.spec import FP4_OPERANDS_SM90, TaskSpec

SCALE_GROUP = 32  # K values per e8m0 scale (OCP MX v1.0)
E2M1_VALUES = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0)


def decode_mxfp4(b_packed: torch.Tensor, b_scales: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """``[K, N]`` values of ``dtype`` from packed codes ``[K/2, N]`` and e8m0 scales ``[K/32, N]``."""
    codes = torch.stack((b_packed & 0xF, b_packed >> 4), dim=1).flatten(0, 1).long()  # [K, N]
    table = torch.tensor(E2M1_VALUES, dtype=dtype, device=b_packed.device)
    scale = torch.exp2(b_scales.to(dtype) - 127.0).repeat_interleave(SCALE_GROUP, dim=0)  # [K, N]
    return table[codes] * scale


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b_packed: torch.Tensor, b_scales: torch.Tensor) -> torch.Tensor:
        compute = torch.float64 if a.dtype == torch.float64 else torch.float32
        return (a.to(compute) @ decode_mxfp4(b_packed, b_scales, compute)).to(a.dtype)


def get_inputs(M: int = 32, N: int = 8192, K: int = 8192):
    return [
        torch.randn(M, K, dtype=torch.bfloat16),
        torch.randint(0, 256, (K // 2, N), dtype=torch.uint8),
        torch.randint(124, 131, (K // SCALE_GROUP, N), dtype=torch.uint8),
    ]


def get_init_inputs(M: int = 32, N: int = 8192, K: int = 8192):
    return []


def cublas_bf16(model: nn.Module, a: torch.Tensor, b_packed: torch.Tensor, b_scales: torch.Tensor) -> torch.Tensor:
    """A bf16 cuBLAS GEMM ``a [M, K] @ B [K, N]`` (``torch.matmul``) on the live activations and a
    bf16 weight decoded from the first call's inputs, cached per model and shape
    (``gemm_baselines.bf16_operands``): it times the bf16 GEMM only."""
    (b16,) = gemm_baselines.bf16_operands(
        model, gemm_baselines.shape_key(b_packed, b_scales),
        lambda: (decode_mxfp4(b_packed, b_scales, torch.float32),),
    )
    return torch.matmul(a, b16)


SPEC = TaskSpec(
    id="mxfp4_gemm_bf16",
    family="gemm",
    description=(
        "Compute a @ B for bfloat16 a [M, K] and a weight B [K, N] given in MXFP4: b_packed uint8 "
        "[K/2, N] with two e2m1 codes per byte along K (low nibble = even row; codes 0-7 are "
        "0, 0.5, 1, 1.5, 2, 3, 4, 6 and bit 3 is the sign) and b_scales uint8 [K/32, N], e8m0 "
        "exponents worth 2^(s - 127) per 32 consecutive K. Return bfloat16 [M, N], accumulating in "
        "float32. K is a multiple of 32. Decode the codes in registers (a quarter of bf16's bytes "
        "cross DRAM) and never materialise the decoded weight."
    ),
    module="hawkeye_env.tasks.mxfp4_gemm_bf16.task",
    dtypes=("bfloat16", "uint8"),
    cpu_shapes=({"M": 67, "N": 45, "K": 96}, {"M": 33, "N": 130, "K": 320}),
    gpu_shapes=({"M": 32, "N": 8192, "K": 8192}, {"M": 256, "N": 8192, "K": 8192}),
    flops=lambda M, N, K, **_: 2.0 * M * N * K,
    bytes_moved=lambda M, N, K, **_: 2.0 * M * K + K * N / 2 + K * N / SCALE_GROUP + 2.0 * M * N,
    tags=("block_scaled_gemm",),
    mma_operands=FP4_OPERANDS_SM90,
    solution="hawkeye_env.tasks.mxfp4_gemm_bf16.solution",
    vendor_baselines={"cublas_bf16": "hawkeye_env.tasks.mxfp4_gemm_bf16.task:cublas_bf16"},
    targets={"cublas_bf16": 1.0},
    layouts=("transposed", "sliced", "offset"),
)
