"""Naive ``coalesced_access``: ``out = x * alpha`` with one program per column (uncoalesced).

Each program owns a column and a block of rows, so consecutive lanes are ``N`` elements apart: every
lane of a warp touches its own 32-byte sector for 4 useful bytes, and no access can be vectorized.

Shapes and dtypes: as ``kernel.scale``: ``x`` float32 or bfloat16 ``[M, N]``, ``alpha`` a float;
returns a contiguous ``[M, N]`` tensor of ``x``'s dtype.

Example::

    import torch
    from units.coalesced_access.naive import scale
    out = scale(torch.randn(8192, 8192, device="cuda"), 0.5)
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

# 1024 rows per program, the solution's elements per program along the walked (strided) dimension.
BLOCK_M, NUM_WARPS = 1024, 8


@triton.jit
def _scale_columns_kernel(
    x_ptr, out_ptr, M, alpha, stride_xm, stride_xn, stride_om, BLOCK_M: tl.constexpr,
):
    col = tl.program_id(0).to(tl.int64)
    rows = tl.program_id(1).to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)  # [BM]
    mask = rows < M
    b_x = tl.load(x_ptr + rows * stride_xm + col * stride_xn, mask=mask)  # [BM]
    b_out = (b_x.to(tl.float32) * alpha).to(out_ptr.dtype.element_ty)
    tl.store(out_ptr + rows * stride_om + col, b_out, mask=mask)


def scale(x: torch.Tensor, alpha: float) -> torch.Tensor:
    """``x * alpha`` for float32/bfloat16 ``x [M, N]``, walking columns."""
    m, n = x.shape
    out = torch.empty((m, n), dtype=x.dtype, device=x.device)
    grid = (n, triton.cdiv(m, BLOCK_M))
    _scale_columns_kernel[grid](
        x, out, m, alpha, x.stride(0), x.stride(1), out.stride(0), BLOCK_M=BLOCK_M, num_warps=NUM_WARPS,
    )
    return out
