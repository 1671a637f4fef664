"""NVFP4 weight GEMM: ``out = a @ decode(B)`` with ``B [K, N]`` stored in NVIDIA's NVFP4.

Inputs: ``a`` bfloat16 ``[M, K]``; ``b_packed`` uint8 ``[K/2, N]`` holding two e2m1 codes per byte
along K (low nibble = even row); ``b_scales`` float8_e4m3fn ``[K/16, N]``, one scale per 16
consecutive K; ``b_tensor_scale`` float32 ``[1]``. ``decode(B)[k, n] = E2M1[code[k, n]] *
b_scales[k // 16, n] * b_tensor_scale``. Output bfloat16 ``[M, N]``. Decoding is exact in float32,
so the reference decodes explicitly in PyTorch and runs a float32 GEMM (float64 when the judge
evaluates it exactly).

Redraws: the judge keeps ``get_inputs``'s codes (integers, drawn under the trial seed; every byte
is a valid pair of e2m1 codes) and redraws ``a``, the e4m3 block scales (a float32 draw cast to
float8_e4m3fn: finite e4m3 values, possibly negative or subnormal) and the tensor scale; the
product is linear in each scale, so any finite scale is a well-posed problem. ``heavy_tailed`` is
left out: a Student-t draw of a block scale beyond 448 saturates (or turns NaN where the cast does
not saturate), which a quantizer's scales (``block amax / 6 / tensor scale <= 448``) never hold.

Vendor baseline ``cublas_bf16``: the bf16 cuBLAS GEMM of the same shape, the speed a weight-only
FP4 kernel must beat; see ``hawkeye_env.tasks.shared.gemm_baselines`` for its cached operand.
"""

from __future__ import annotations

import torch
from torch import nn

from hawkeye_env.tasks.shared import gemm_baselines
from hawkeye_env.tasks.spec import FP4_OPERANDS_SM90, TaskSpec

SCALE_GROUP = 16  # K values per e4m3 scale (NVFP4)
E2M1_VALUES = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0)


def decode_nvfp4(b_packed: torch.Tensor, b_scales: torch.Tensor, b_tensor_scale: torch.Tensor,
                 dtype: torch.dtype) -> torch.Tensor:
    """``[K, N]`` values of ``dtype`` from packed codes ``[K/2, N]``, e4m3 scales ``[K/16, N]`` and
    the one-element tensor scale."""
    codes = torch.stack((b_packed & 0xF, b_packed >> 4), dim=1).flatten(0, 1).long()  # [K, N]
    table = torch.tensor(E2M1_VALUES, dtype=dtype, device=b_packed.device)
    scale = b_scales.to(dtype).repeat_interleave(SCALE_GROUP, dim=0)  # [K, N]
    return table[codes] * scale * b_tensor_scale.to(dtype).reshape(())


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b_packed: torch.Tensor, b_scales: torch.Tensor,
                b_tensor_scale: torch.Tensor) -> torch.Tensor:
        compute = torch.float64 if a.dtype == torch.float64 else torch.float32
        return (a.to(compute) @ decode_nvfp4(b_packed, b_scales, b_tensor_scale, compute)).to(a.dtype)


def get_inputs(M: int = 32, N: int = 8192, K: int = 8192):
    return [
        torch.randn(M, K, dtype=torch.bfloat16),
        torch.randint(0, 256, (K // 2, N), dtype=torch.uint8),
        (torch.rand(K // SCALE_GROUP, N) * 6.0 + 0.5).to(torch.float8_e4m3fn),
        torch.rand(1) / 6.0,
    ]


def get_init_inputs(M: int = 32, N: int = 8192, K: int = 8192):
    return []


def cublas_bf16(model: nn.Module, a: torch.Tensor, b_packed: torch.Tensor, b_scales: torch.Tensor,
                b_tensor_scale: torch.Tensor) -> torch.Tensor:
    """A bf16 cuBLAS GEMM ``a [M, K] @ B [K, N]`` (``torch.matmul``) on the live activations and a
    bf16 weight decoded from the first call's inputs, cached per model and shape
    (``gemm_baselines.bf16_operands``): it times the bf16 GEMM only."""
    (b16,) = gemm_baselines.bf16_operands(
        model, gemm_baselines.shape_key(b_packed, b_scales),
        lambda: (decode_nvfp4(b_packed, b_scales, b_tensor_scale, torch.float32),),
    )
    return torch.matmul(a, b16)


SPEC = TaskSpec(
    id="nvfp4_gemm_bf16",
    family="gemm",
    description=(
        "Compute a @ B for bfloat16 a [M, K] and a weight B [K, N] given in NVFP4: b_packed uint8 "
        "[K/2, N] with two e2m1 codes per byte along K (low nibble = even row; codes 0-7 are "
        "0, 0.5, 1, 1.5, 2, 3, 4, 6 and bit 3 is the sign), b_scales float8_e4m3fn [K/16, N], one "
        "scale per 16 consecutive K, and b_tensor_scale float32 [1]: B[k, n] = e2m1(code[k, n]) * "
        "b_scales[k // 16, n] * b_tensor_scale. Return bfloat16 [M, N], accumulating in float32. "
        "K is a multiple of 16; scales may be any finite value. Decode the codes and scales in "
        "registers (an e2m1 value times an e4m3 scale is exact in bf16), apply the tensor scale "
        "once in the epilogue, and never materialise the decoded weight."
    ),
    module="hawkeye_env.tasks.nvfp4_gemm_bf16.task",
    dtypes=("bfloat16", "uint8", "float8_e4m3fn", "float32"),
    cpu_shapes=({"M": 67, "N": 45, "K": 80}, {"M": 33, "N": 130, "K": 320}),
    gpu_shapes=({"M": 32, "N": 8192, "K": 8192}, {"M": 256, "N": 8192, "K": 8192}),
    flops=lambda M, N, K, **_: 2.0 * M * N * K,
    bytes_moved=lambda M, N, K, **_: 2.0 * M * K + K * N / 2 + K * N / SCALE_GROUP + 4.0 + 2.0 * M * N,
    tags=("block_scaled_gemm",),
    mma_operands=FP4_OPERANDS_SM90,
    distributions=("normal", "uniform"),
    solution="hawkeye_env.tasks.nvfp4_gemm_bf16.solution",
    vendor_baselines={"cublas_bf16": "hawkeye_env.tasks.nvfp4_gemm_bf16.task:cublas_bf16"},
    targets={"cublas_bf16": 1.0},
    layouts=("transposed", "sliced", "offset"),
)
