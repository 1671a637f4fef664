"""Naive ``fp8_scaled_gemm``: dequantize both operands to bf16 in global memory, then a bf16 GEMM.

Pass 1 (``_dequant_kernel``) reads each fp8 operand once and writes it back as bf16 multiplied by
its scale (per tensor, per row/column or per 128x128 block: one kernel, the scale's broadcast is
expressed by how many rows and columns share one scale). Pass 2 is the house bf16 tensor-core
GEMM (``units.grouped_tile_order.kernel.matmul`` at ``HOUSE_BF16_GEMM_TILES``). What this leaves
out: fp8 MMAs (half the rate), reading fp8 operands in the GEMM (it reads twice the bytes) and the
extra DRAM round trip.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from units.grouped_tile_order.kernel import HOUSE_BF16_GEMM_TILES, matmul

BLOCK_R, BLOCK_C = 32, 128
SCALE_BLOCK = 128


@triton.jit
def _dequant_kernel(x_ptr, s_ptr, y_ptr, R, C, stride_xr, stride_xc, stride_sr, stride_sc,
                    ROWS_PER_SCALE: tl.constexpr, COLS_PER_SCALE: tl.constexpr,
                    BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    offs_r = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)  # [BR]
    offs_c = tl.program_id(1) * BLOCK_C + tl.arange(0, BLOCK_C)  # [BC]
    mask = (offs_r[:, None] < R) & (offs_c[None, :] < C)
    b_x = tl.load(x_ptr + offs_r[:, None].to(tl.int64) * stride_xr + offs_c[None, :] * stride_xc,
                  mask=mask, other=0.0)
    p_s = s_ptr + (offs_r[:, None] // ROWS_PER_SCALE) * stride_sr + (offs_c[None, :] // COLS_PER_SCALE) * stride_sc
    b_s = tl.load(p_s, mask=mask, other=0.0)  # [BR, BC]
    tl.store(y_ptr + offs_r[:, None].to(tl.int64) * C + offs_c[None, :],
             (b_x.to(tl.float32) * b_s).to(tl.bfloat16), mask=mask)


def dequantize(x: torch.Tensor, scale: torch.Tensor, rows_per_scale: int, cols_per_scale: int
               ) -> torch.Tensor:
    """bf16 ``x * scale`` with ``scale[r // rows_per_scale, c // cols_per_scale]`` (2-D scale)."""
    r, c = x.shape
    y = torch.empty((r, c), dtype=torch.bfloat16, device=x.device)
    grid = (triton.cdiv(r, BLOCK_R), triton.cdiv(c, BLOCK_C))
    _dequant_kernel[grid](x, scale, y, r, c, x.stride(0), x.stride(1), scale.stride(0),
                          scale.stride(1), ROWS_PER_SCALE=rows_per_scale,
                          COLS_PER_SCALE=cols_per_scale, BLOCK_R=BLOCK_R, BLOCK_C=BLOCK_C)
    return y


def fp8_gemm_per_tensor(a_fp8, b_fp8, scale_a, scale_b):
    """Same contract as ``kernel.fp8_gemm_per_tensor``; two passes."""
    (m, k), n = a_fp8.shape, b_fp8.shape[1]
    a = dequantize(a_fp8, scale_a.float().reshape(1, 1), m, k)
    b = dequantize(b_fp8, scale_b.float().reshape(1, 1), k, n)
    return _bf16_gemm(a, b)


def fp8_gemm_per_row(a, b, scale_a_rows, scale_b_cols):
    """Same contract as ``kernel.fp8_gemm_per_row``; two passes."""
    (m, k), n = a.shape, b.shape[1]
    a16 = dequantize(a, scale_a_rows.float().reshape(m, 1), 1, k)
    b16 = dequantize(b, scale_b_cols.float().reshape(1, n), k, 1)
    return _bf16_gemm(a16, b16)


def fp8_gemm_block(a, b, scale_a, scale_b):
    """Same contract as ``kernel.fp8_gemm_block``; two passes."""
    a16 = dequantize(a, scale_a.float(), SCALE_BLOCK, SCALE_BLOCK)
    b16 = dequantize(b, scale_b.float(), SCALE_BLOCK, SCALE_BLOCK)
    return _bf16_gemm(a16, b16)


def _bf16_gemm(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return matmul(a, b, **HOUSE_BF16_GEMM_TILES)
