"""Naive ``mxfp4_gemm``: decode B to a bf16 ``[K, N]`` tensor in global memory, then a bf16 GEMM.

Pass 1 (``_decode_kernel``) reads the packed codes and scales once and writes the decoded weight
(4x the packed bytes) with the same bit-level e2m1 decode as the solution; pass 2 is the house
bf16 tensor-core GEMM (``units.grouped_tile_order.kernel.matmul`` at ``HOUSE_BF16_GEMM_TILES``),
which reads the decoded weight back. What this leaves out: keeping the decoded weight in
registers, so B crosses DRAM at 4 bits per value instead of 4 + 16 + 16.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from units.block_scaled_fp4 import e2m1_to_bf16
from units.grouped_tile_order.kernel import HOUSE_BF16_GEMM_TILES, matmul
from units.mxfp4_gemm.kernel import SCALE_GROUP

BLOCK_KP, BLOCK_N = 32, 128


@triton.jit
def _decode_kernel(q_ptr, s_ptr, out_ptr, KP, N, stride_qk, stride_qn, stride_sk, stride_sn,
                   SCALE_GROUP: tl.constexpr, BLOCK_KP: tl.constexpr, BLOCK_N: tl.constexpr):
    offs_kp = tl.program_id(0) * BLOCK_KP + tl.arange(0, BLOCK_KP)  # [BKP] packed rows
    offs_n = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)  # [BN]
    mask = (offs_kp[:, None] < KP) & (offs_n[None, :] < N)
    b_q = tl.load(q_ptr + offs_kp[:, None] * stride_qk + offs_n[None, :] * stride_qn, mask=mask, other=0)
    p_s = s_ptr + (offs_kp[:, None] // (SCALE_GROUP // 2)) * stride_sk + offs_n[None, :] * stride_sn
    b_s = tl.load(p_s, mask=mask, other=0)
    b_scale = (b_s.to(tl.uint16) << 7).to(tl.bfloat16, bitcast=True)  # [BKP, BN]
    p_out = out_ptr + (2 * offs_kp[:, None]).to(tl.int64) * N + offs_n[None, :]
    tl.store(p_out, e2m1_to_bf16(b_q & 0xF) * b_scale, mask=mask)
    tl.store(p_out + N, e2m1_to_bf16(b_q >> 4) * b_scale, mask=mask)


def decode(b_packed: torch.Tensor, b_scales: torch.Tensor) -> torch.Tensor:
    """bf16 ``[K, N]`` decoded from MXFP4 ``(packed [K/2, N], scales [K/32, N])``."""
    kp, n = b_packed.shape
    out = torch.empty((2 * kp, n), dtype=torch.bfloat16, device=b_packed.device)
    grid = (triton.cdiv(kp, BLOCK_KP), triton.cdiv(n, BLOCK_N))
    _decode_kernel[grid](b_packed, b_scales, out, kp, n, b_packed.stride(0), b_packed.stride(1),
                         b_scales.stride(0), b_scales.stride(1), SCALE_GROUP=SCALE_GROUP,
                         BLOCK_KP=BLOCK_KP, BLOCK_N=BLOCK_N)
    return out


def mxfp4_gemm(a: torch.Tensor, b_packed: torch.Tensor, b_scales: torch.Tensor) -> torch.Tensor:
    """Same contract as ``kernel.mxfp4_gemm``; two passes."""
    return _bf16_gemm(a, decode(b_packed, b_scales))


def _bf16_gemm(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return matmul(a, b, **HOUSE_BF16_GEMM_TILES)
