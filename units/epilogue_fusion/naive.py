"""Naive ``epilogue_fusion``: a bfloat16 GEMM kernel, then a separate bias + GELU kernel.

The GEMM (``grouped_tile_order``'s kernel at the solution's tiling and configuration, so only the
fusion differs) rounds ``a @ b`` to bfloat16 and stores it; an elementwise kernel then reads it
back with the bias, applies GELU (tanh) in float32 and writes it again: ``M * N`` bfloat16 values
cross DRAM three more times, plus a launch.

Shapes and dtypes: as ``kernel.linear_gelu``: bfloat16 ``a [M, K]``, ``b [K, N]``, ``bias [N]``;
returns a contiguous bfloat16 ``[M, N]`` tensor.

Example::

    import torch
    from units.epilogue_fusion.naive import linear_gelu
    a = torch.randn(512, 256, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(256, 384, device="cuda", dtype=torch.bfloat16) / 16
    y = linear_gelu(a, b, torch.zeros(384, device="cuda", dtype=torch.bfloat16))
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from units.epilogue_fusion.kernel import (
    BLOCK_K,
    BLOCK_M,
    BLOCK_N,
    GELU_CUBIC,
    GROUP_M,
    NUM_STAGES,
    NUM_WARPS,
    TWO_SQRT_2_OVER_PI,
)
from units.grouped_tile_order.kernel import matmul as grouped_matmul

BLOCK = 4096  # elementwise tile: 16 bf16 per thread at 8 warps (two 128-bit accesses)


@triton.jit
def _bias_gelu_kernel(c_ptr, bias_ptr, numel, N, stride_bias, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)  # [BLOCK]
    mask = offs < numel
    b_c = tl.load(c_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    b_bias = tl.load(bias_ptr + (offs % N) * stride_bias, mask=mask, other=0.0).to(tl.float32)
    x = b_c + b_bias
    u2 = TWO_SQRT_2_OVER_PI * (x + GELU_CUBIC * x * x * x)
    y = x / (1.0 + tl.exp(-u2))
    tl.store(c_ptr + offs, y.to(c_ptr.dtype.element_ty), mask=mask)


def linear_gelu(a: torch.Tensor, b: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    """``gelu_tanh(a @ b + bias)`` as a GEMM kernel followed by an elementwise kernel."""
    m, n = a.shape[0], b.shape[1]
    c = grouped_matmul(a, b, block_m=BLOCK_M, block_n=BLOCK_N, block_k=BLOCK_K, group_m=GROUP_M,
                       num_stages=NUM_STAGES, num_warps=NUM_WARPS)
    _bias_gelu_kernel[(triton.cdiv(m * n, BLOCK),)](c, bias, m * n, n, bias.stride(0), BLOCK=BLOCK, num_warps=8)
    return c
