"""Solution of ``coalesced_access``: ``out = x * alpha`` over a 2-D ``[M, N]`` tensor, row tiles.

Strategy: consecutive lanes read consecutive addresses of a row, so each warp access is a few full
128-byte lines and Triton emits 128-bit vector loads and stores.

Shapes and dtypes: ``x`` float32 or bfloat16 ``[M, N]`` (any row stride, unit column stride for full
speed); ``alpha`` a Python float. Returns a contiguous ``[M, N]`` tensor of ``x``'s dtype; the
product is computed in float32 and rounded once.

Example::

    import torch
    from units.coalesced_access.kernel import scale
    x = torch.randn(8192, 8192, device="cuda")
    out = scale(x, 0.5)  # == x * 0.5
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

# Tile of 4 rows x 1024 contiguous columns: 4096 elements per program, 16 per thread at 8 warps,
# i.e. four 128-bit accesses per thread for fp32 (the vector_add_fp32 expert's per-thread load).
BLOCK_M, BLOCK_N, NUM_WARPS = 4, 1024, 8


@triton.jit
def _scale_rows_kernel(
    x_ptr, out_ptr, M, N, alpha, stride_xm, stride_xn, stride_om,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rows = pid_m.to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)  # [BM]
    cols = pid_n.to(tl.int64) * BLOCK_N + tl.arange(0, BLOCK_N)  # [BN]
    mask = (rows[:, None] < M) & (cols[None, :] < N)  # [BM, BN]
    b_x = tl.load(x_ptr + rows[:, None] * stride_xm + cols[None, :] * stride_xn, mask=mask)  # [BM, BN]
    b_out = (b_x.to(tl.float32) * alpha).to(out_ptr.dtype.element_ty)
    tl.store(out_ptr + rows[:, None] * stride_om + cols[None, :], b_out, mask=mask)


def scale(x: torch.Tensor, alpha: float) -> torch.Tensor:
    """``x * alpha`` for float32/bfloat16 ``x [M, N]``; returns a contiguous ``[M, N]`` tensor."""
    m, n = x.shape
    out = torch.empty((m, n), dtype=x.dtype, device=x.device)
    grid = (triton.cdiv(m, BLOCK_M), triton.cdiv(n, BLOCK_N))
    _scale_rows_kernel[grid](
        x, out, m, n, alpha, x.stride(0), x.stride(1), out.stride(0),
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, num_warps=NUM_WARPS,
    )
    return out
