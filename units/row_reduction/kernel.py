"""Solution of ``row_reduction``: RMSNorm forward, ``x * rsqrt(mean(x^2) + eps) * weight``.

Strategy: one program per row holds the whole row in registers, reduces it and writes the normalized
row, so ``x`` crosses DRAM once in and once out.

Shapes and dtypes: ``x`` float32 or bfloat16 ``[M, N]`` (any strides), ``weight`` ``[N]`` of the same
dtype, ``eps`` a float. Math is float32; returns a contiguous ``[M, N]`` tensor of ``x``'s dtype.
Rows up to ``N = 16384`` fit (16 warps, 32 fp32 values per thread); wider rows belong to a
tiled, multi-pass design (see the README's Traps).

Example::

    import torch
    from units.row_reduction.kernel import rms_norm
    x = torch.randn(16384, 4096, device="cuda", dtype=torch.bfloat16)
    w = torch.ones(4096, device="cuda", dtype=torch.bfloat16)
    y = rms_norm(x, w)
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

MAX_BLOCK_N = 16384  # 32 fp32 registers per thread at 16 warps; past this the row spills


@triton.jit
def _rms_norm_row_kernel(
    x_ptr, w_ptr, out_ptr, N, eps, stride_xm, stride_xn, stride_w, stride_om, BLOCK_N: tl.constexpr,
):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_N)  # [BN]
    mask = cols < N
    b_x = tl.load(x_ptr + row * stride_xm + cols * stride_xn, mask=mask, other=0.0).to(tl.float32)  # [BN]
    b_w = tl.load(w_ptr + cols * stride_w, mask=mask, other=0.0).to(tl.float32)  # [BN]
    inv_rms = tl.rsqrt(tl.sum(b_x * b_x, axis=0) / N + eps)
    b_y = b_x * inv_rms * b_w
    tl.store(out_ptr + row * stride_om + cols, b_y.to(out_ptr.dtype.element_ty), mask=mask)


def _num_warps(block_n: int) -> int:
    # 16 bytes (one 128-bit access) or more per thread per row: 4 warps to 1024, 8 to 4096, then 16.
    return 4 if block_n <= 1024 else 8 if block_n <= 4096 else 16


def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    """RMSNorm of ``x [M, N]`` with ``weight [N]``; returns ``[M, N]`` in ``x``'s dtype."""
    m, n = x.shape
    block_n = triton.next_power_of_2(n)
    if block_n > MAX_BLOCK_N:
        raise ValueError(f"rows of {n} elements exceed the register-resident limit {MAX_BLOCK_N}")
    out = torch.empty((m, n), dtype=x.dtype, device=x.device)
    _rms_norm_row_kernel[(m,)](
        x, weight, out, n, eps, x.stride(0), x.stride(1), weight.stride(0), out.stride(0),
        BLOCK_N=block_n, num_warps=_num_warps(block_n),
    )
    return out
