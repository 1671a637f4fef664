"""Solution of ``online_softmax``: row softmax of very wide float32 rows in two streaming reads.

Strategy: stream each row in ``BLOCK_N`` tiles keeping a running max ``m`` and running sum ``l``
(rescaled by ``exp(m_old - m_new)`` whenever the max grows), then stream again to write
``exp(x - m) / l``: two reads and one write instead of three reads and one write.

The running statistics are per lane (``[BLOCK_N]`` vectors) and merged once at the end, so the loop
has no cross-warp reduction. Lanes start at ``-FLT_MAX`` rather than ``-inf`` so a lane that only
ever sees masked (``-inf``) padding rescales by ``exp(0)`` instead of producing NaN.

Shapes and dtypes: ``x`` float32 ``[M, N]`` (any strides; rows of any width); returns a contiguous
float32 ``[M, N]`` tensor. Math is float32 with ``exp2``.

Example::

    import torch
    from units.online_softmax.kernel import softmax
    x = torch.randn(4096, 32768, device="cuda")
    y = softmax(x)  # == torch.softmax(x, -1)
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

# 2048 fp32 per tile: 8 per thread at 8 warps (two 128-bit loads), plus 16 registers of per-lane m, l.
BLOCK_N, NUM_WARPS = 2048, 8
LOG2E = tl.constexpr(1.4426950408889634)
FLT_MAX = tl.constexpr(3.4028234663852886e38)  # the largest finite float32


@triton.jit
def _online_softmax_kernel(
    x_ptr, out_ptr, N, stride_xm, stride_xn, stride_om, BLOCK_N: tl.constexpr,
):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * stride_xm
    b_m = tl.full((BLOCK_N,), -FLT_MAX, dtype=tl.float32)  # [BN]
    b_l = tl.zeros((BLOCK_N,), dtype=tl.float32)  # [BN]
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)  # [BN]
        b_x = tl.load(x_row + cols * stride_xn, mask=cols < N, other=-float("inf")) * LOG2E  # [BN]
        b_m_new = tl.maximum(b_m, b_x)
        b_l = b_l * tl.exp2(b_m - b_m_new) + tl.exp2(b_x - b_m_new)
        b_m = b_m_new
    m = tl.max(b_m, axis=0)
    inv_l = 1.0 / tl.sum(b_l * tl.exp2(b_m - m), axis=0)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)  # [BN]
        mask = cols < N
        b_x = tl.load(x_row + cols * stride_xn, mask=mask, other=0.0) * LOG2E  # [BN]
        tl.store(out_ptr + row * stride_om + cols, tl.exp2(b_x - m) * inv_l, mask=mask)


def softmax(x: torch.Tensor) -> torch.Tensor:
    """Softmax over the last dimension of float32 ``x [M, N]``; returns float32 ``[M, N]``."""
    m, n = x.shape
    out = torch.empty((m, n), dtype=torch.float32, device=x.device)
    _online_softmax_kernel[(m,)](
        x, out, n, x.stride(0), x.stride(1), out.stride(0), BLOCK_N=BLOCK_N, num_warps=NUM_WARPS,
    )
    return out
