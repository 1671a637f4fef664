"""PyTorch references of ``fp8_scaled_gemm``: decode the fp8 codes, apply the scales, multiply.

Every function computes in float64 (fp8 codes and float32 scales are exact there) and returns
``out_dtype``: by default bfloat16 like the kernels, or float64 when ``a`` is float64 (the
harness's exact reference).
"""

from __future__ import annotations

import torch

SCALE_BLOCK = 128


def _expand_block_scales(scale: torch.Tensor, rows: int, cols: int) -> torch.Tensor:
    """``[ceil(rows/128), ceil(cols/128)]`` block scales repeated to a ``[rows, cols]`` tensor."""
    full = scale.double().repeat_interleave(SCALE_BLOCK, 0).repeat_interleave(SCALE_BLOCK, 1)
    return full[:rows, :cols]


def fp8_gemm_per_tensor(a_fp8, b_fp8, scale_a, scale_b, out_dtype=None):
    """``(a * scale_a) @ (b * scale_b)`` for float8_e4m3fn ``a [M, K]``, ``b [K, N]``."""
    a = a_fp8.double() * scale_a.double().reshape(())
    b = b_fp8.double() * scale_b.double().reshape(())
    return (a @ b).to(_result_dtype(a_fp8, out_dtype))


def fp8_gemm_per_row(a, b, scale_a_rows, scale_b_cols, out_dtype=None):
    """``scale_a_rows[:, None] * (a @ b) * scale_b_cols[None, :]``."""
    out = (a.double() @ b.double()) * scale_a_rows.double()[:, None] * scale_b_cols.double()[None, :]
    return out.to(_result_dtype(a, out_dtype))


def fp8_gemm_block(a, b, scale_a, scale_b, out_dtype=None):
    """Each 128x128 block of ``a`` and ``b`` times its scale, then the product."""
    a_deq = a.double() * _expand_block_scales(scale_a, *a.shape)
    b_deq = b.double() * _expand_block_scales(scale_b, *b.shape)
    return (a_deq @ b_deq).to(_result_dtype(a, out_dtype))


def _result_dtype(first: torch.Tensor, out_dtype: torch.dtype | None) -> torch.dtype:
    """``out_dtype`` if given, else float64 for float64 inputs (the harness's exact reference), else bf16."""
    if out_dtype is not None:
        return out_dtype
    return torch.float64 if first.dtype == torch.float64 else torch.bfloat16
