"""Naive ``epilogue_fusion``: a bfloat16 GEMM kernel, then a separate bias + GELU kernel.

The GEMM (the solution's tiling and configuration, so only the fusion differs) rounds ``a @ b`` to
bfloat16 and stores it; an elementwise kernel then reads it back with the bias, applies GELU (tanh)
in float32 and writes it again: ``M * N`` bfloat16 values cross DRAM three more times, plus a launch.

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

BLOCK = 4096  # elementwise tile: 16 bf16 per thread at 8 warps (two 128-bit accesses)


@triton.jit
def _matmul_kernel(
    a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
):
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    first_pid_m = (pid // num_pid_in_group) * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m

    offs_am = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M  # [BM]
    offs_bn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N  # [BN]
    offs_k = tl.arange(0, BLOCK_K)  # [BK]
    p_a = a_ptr + offs_am[:, None].to(tl.int64) * stride_am + offs_k[None, :] * stride_ak  # [BM, BK]
    p_b = b_ptr + offs_k[:, None] * stride_bk + offs_bn[None, :].to(tl.int64) * stride_bn  # [BK, BN]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)  # [BM, BN]
    for k in range(tl.cdiv(K, BLOCK_K)):
        k_left = K - k * BLOCK_K
        b_a = tl.load(p_a, mask=offs_k[None, :] < k_left, other=0.0)  # [BM, BK]
        b_b = tl.load(p_b, mask=offs_k[:, None] < k_left, other=0.0)  # [BK, BN]
        acc = tl.dot(b_a, b_b, acc)
        p_a += BLOCK_K * stride_ak
        p_b += BLOCK_K * stride_bk

    offs_cm = pid_m.to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)  # [BM]
    offs_cn = pid_n.to(tl.int64) * BLOCK_N + tl.arange(0, BLOCK_N)  # [BN]
    p_c = c_ptr + offs_cm[:, None] * stride_cm + offs_cn[None, :] * stride_cn  # [BM, BN]
    tl.store(p_c, acc.to(c_ptr.dtype.element_ty), mask=(offs_cm[:, None] < M) & (offs_cn[None, :] < N))


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
    m, k = a.shape
    n = b.shape[1]
    c = torch.empty((m, n), dtype=a.dtype, device=a.device)
    _matmul_kernel[(triton.cdiv(m, BLOCK_M) * triton.cdiv(n, BLOCK_N),)](
        a, b, c, m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, GROUP_M=GROUP_M,
        num_stages=NUM_STAGES, num_warps=NUM_WARPS,
    )
    _bias_gelu_kernel[(triton.cdiv(m * n, BLOCK),)](c, bias, m * n, n, bias.stride(0), BLOCK=BLOCK, num_warps=8)
    return c
