"""Taxonomy entry and inputs of ``nvfp4_gemm``.

Shapes are ``{"M", "N", "K"}`` with K a multiple of 16. Inputs: ``a`` standard normal in bf16;
the weight is a standard-normal bf16 ``[K, N]`` encoded with ``reference.quantize_nvfp4``.
"""

from __future__ import annotations

import torch

from units.lib.spec import Metric, Unit
from units.nvfp4_gemm.reference import quantize_nvfp4


def make_inputs(shape, device: str, seed: int) -> tuple:
    """``(a bf16 [M, K], b_packed uint8 [K/2, N], b_scales e4m3 [K/16, N], b_tensor_scale fp32 [1])``."""
    g = torch.Generator(device="cpu").manual_seed(seed)
    a = torch.randn(shape["M"], shape["K"], generator=g).to(torch.bfloat16)
    b = torch.randn(shape["K"], shape["N"], generator=g).to(torch.bfloat16)
    packed, scales, tensor_scale = quantize_nvfp4(b)
    return a.to(device), packed.to(device), scales.to(device), tensor_scale.to(device)


UNIT = Unit(
    name="nvfp4_gemm",
    title="NVFP4 block-scaled GEMM with e2m1 values decoded in registers",
    architecture="hopper",
    strategy="NVFP4 block-scaled GEMM (e2m1 values, e4m3 scales per 16, fp32 tensor scale)",
    precisions=("nvfp4",),
    tags=("block_scaled_gemm",),
    summary=(
        "The packed 4-bit weight is loaded tile by tile, decoded to bf16 with integer bit tricks and "
        "its e4m3 block scale inside the K loop, and fed to bf16 tensor-core MMAs; the "
        "decoded weight never touches DRAM. Decoding to a bf16 tensor first moves 9x the weight bytes."
    ),
    metric=Metric(
        name="achieved_tflops",
        unit="TFLOP/s",
        higher_is_better=True,
        how="bf16-equivalent 2*M*N*K over the launch-hidden CUDA-event median at M=32, N=K=8192, random inputs",
        # Weight-only FP4 pays where the weight stream dominates: decode-sized M. At M=256 the
        # H200 ran the fused kernel at 0.246 ms against the naive decode-then-GEMM's 0.185 ms
        # (2026-11-30): the in-register decode, repeated per row tile, outweighs the 128 MB bf16
        # round trip once there are 34 GFLOP of MMAs. At M=32 the naive pass still moves about
        # 290 MB (FP4 read, bf16 write, bf16 re-read; ~70 us at 4.2 TB/s) against the fused
        # kernel's 36 MB of codes and scales, so 1.5x is the bar; what the H200 reaches is the
        # nvfp4_gemm row of BENCHMARKS.md's Units table.
        min_margin=1.5,
    ),
    solution="units.nvfp4_gemm.kernel:nvfp4_gemm",
    naive="units.nvfp4_gemm.naive:nvfp4_gemm",
    reference="units.nvfp4_gemm.reference:nvfp4_gemm",
    make_inputs="units.nvfp4_gemm.meta:make_inputs",
    cpu_shapes=({"M": 67, "N": 45, "K": 80}, {"M": 33, "N": 130, "K": 320}),
    # M=256 first: weight-only FP4 pays where reading B dominates (decode / small-batch GEMMs). At
    # 8192^3 both kernels are bound by bf16 MMAs and the naive's decode pass is ~3% of the time,
    # so the 1.2x margin is not expected there; that shape is kept as the compute-bound check.
    gpu_shapes=({"M": 32, "N": 8192, "K": 8192}, {"M": 256, "N": 8192, "K": 8192}),
    flops=lambda M, N, K: 2.0 * M * N * K,
    bytes_moved=lambda M, N, K: 2.0 * M * K + K * N / 2 + K * N / 16 + 4 + 2.0 * M * N,
    why="Hopper has no FP4 tensor cores: values are decoded in registers and fed to bf16 wgmma; "
        "Blackwell consumes NVFP4 natively (on-paper slot blackwell_native_fp4)",
)
