"""Naive ``row_reduction``: RMSNorm forward in two kernels (statistics, then normalize).

Pass 1 reduces each row's sum of squares and writes ``mean(x^2)`` to a float32 ``[M]`` buffer;
pass 2 reads ``x`` again with the statistic and the weight and writes the output. ``x`` crosses DRAM
twice, plus a launch and a global round trip for the statistics.

Shapes and dtypes: as ``kernel.rms_norm``: ``x`` float32 or bfloat16 ``[M, N]``, ``weight [N]``;
float32 math; returns ``[M, N]`` in ``x``'s dtype.

Example::

    import torch
    from units.row_reduction.naive import rms_norm
    y = rms_norm(torch.randn(64, 4096, device="cuda"), torch.ones(4096, device="cuda"))
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

BLOCK = 1024  # a fixed tile in both passes, 8 elements per thread at 4 warps
NUM_WARPS = 4


@triton.jit
def _mean_square_kernel(x_ptr, ms_ptr, N, stride_xm, stride_xn, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)  # [BLOCK]
    for start in range(0, N, BLOCK):
        cols = start + tl.arange(0, BLOCK)  # [BLOCK]
        b_x = tl.load(x_ptr + row * stride_xm + cols * stride_xn, mask=cols < N, other=0.0)
        b_x = b_x.to(tl.float32)
        acc += b_x * b_x
    tl.store(ms_ptr + row, tl.sum(acc, axis=0) / N)


@triton.jit
def _normalize_kernel(
    x_ptr, w_ptr, ms_ptr, out_ptr, N, eps, stride_xm, stride_xn, stride_w, stride_om,
    BLOCK: tl.constexpr,
):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)  # [BLOCK]
    mask = cols < N
    b_x = tl.load(x_ptr + row * stride_xm + cols * stride_xn, mask=mask, other=0.0).to(tl.float32)
    b_w = tl.load(w_ptr + cols * stride_w, mask=mask, other=0.0).to(tl.float32)
    inv_rms = tl.rsqrt(tl.load(ms_ptr + row) + eps)
    tl.store(out_ptr + row * stride_om + cols, (b_x * inv_rms * b_w).to(out_ptr.dtype.element_ty), mask=mask)


def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    """RMSNorm of ``x [M, N]`` with ``weight [N]`` in two passes over ``x``."""
    m, n = x.shape
    mean_square = torch.empty((m,), dtype=torch.float32, device=x.device)
    out = torch.empty((m, n), dtype=x.dtype, device=x.device)
    _mean_square_kernel[(m,)](x, mean_square, n, x.stride(0), x.stride(1), BLOCK=BLOCK, num_warps=NUM_WARPS)
    _normalize_kernel[(m, triton.cdiv(n, BLOCK))](
        x, weight, mean_square, out, n, eps, x.stride(0), x.stride(1), weight.stride(0), out.stride(0),
        BLOCK=BLOCK, num_warps=NUM_WARPS,
    )
    return out
