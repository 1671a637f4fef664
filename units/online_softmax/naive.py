"""Naive ``online_softmax``: row softmax of wide float32 rows in three passes (three kernels).

Pass 1 writes each row's max to a float32 ``[M]`` buffer, pass 2 each row's ``sum(exp(x - max))``,
pass 3 reads ``x`` a third time and writes ``exp(x - max) / sum``. Each pass reduces its tile to a
scalar before moving on. ``x`` crosses DRAM three times.

Shapes and dtypes: as ``kernel.softmax``: ``x`` float32 ``[M, N]``; returns float32 ``[M, N]``.

Example::

    import torch
    from units.online_softmax.naive import softmax
    y = softmax(torch.randn(64, 32768, device="cuda"))
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

BLOCK_N, NUM_WARPS = 2048, 8  # the solution's tile, so only the number of passes differs


@triton.jit
def _row_max_kernel(x_ptr, max_ptr, N, stride_xm, stride_xn, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    m = -float("inf")
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)  # [BN]
        b_x = tl.load(x_ptr + row * stride_xm + cols * stride_xn, mask=cols < N, other=-float("inf"))
        m = tl.maximum(m, tl.max(b_x, axis=0))
    tl.store(max_ptr + row, m)


@triton.jit
def _row_sum_exp_kernel(x_ptr, max_ptr, sum_ptr, N, stride_xm, stride_xn, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    m = tl.load(max_ptr + row)
    s = 0.0
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)  # [BN]
        b_x = tl.load(x_ptr + row * stride_xm + cols * stride_xn, mask=cols < N, other=-float("inf"))
        s += tl.sum(tl.exp(b_x - m), axis=0)
    tl.store(sum_ptr + row, s)


@triton.jit
def _normalize_kernel(
    x_ptr, max_ptr, sum_ptr, out_ptr, N, stride_xm, stride_xn, stride_om, BLOCK_N: tl.constexpr,
):
    row = tl.program_id(0).to(tl.int64)
    m = tl.load(max_ptr + row)
    s = tl.load(sum_ptr + row)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)  # [BN]
        mask = cols < N
        b_x = tl.load(x_ptr + row * stride_xm + cols * stride_xn, mask=mask, other=0.0)
        tl.store(out_ptr + row * stride_om + cols, tl.exp(b_x - m) / s, mask=mask)


def softmax(x: torch.Tensor) -> torch.Tensor:
    """Softmax over the last dimension of float32 ``x [M, N]`` in three passes."""
    m, n = x.shape
    row_max = torch.empty((m,), dtype=torch.float32, device=x.device)
    row_sum = torch.empty((m,), dtype=torch.float32, device=x.device)
    out = torch.empty((m, n), dtype=torch.float32, device=x.device)
    sx = (x.stride(0), x.stride(1))
    _row_max_kernel[(m,)](x, row_max, n, *sx, BLOCK_N=BLOCK_N, num_warps=NUM_WARPS)
    _row_sum_exp_kernel[(m,)](x, row_max, row_sum, n, *sx, BLOCK_N=BLOCK_N, num_warps=NUM_WARPS)
    _normalize_kernel[(m,)](
        x, row_max, row_sum, out, n, *sx, out.stride(0), BLOCK_N=BLOCK_N, num_warps=NUM_WARPS,
    )
    return out
