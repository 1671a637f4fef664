"""``persistent_splitk`` without the strategy: one program per output tile, the whole K in each.

At M=64, N=4096 that is 32 programs for 132 SMs: 100 SMs idle while each busy one streams a
16384 x 128 strip of B alone. Tiles, stages and warps are those of the split-K kernel in
``kernel.py``; only the K split (and its reduction) is missing.

Inputs ``a [M, K]`` and ``b [K, N]`` are bfloat16 with any strides; the output is a contiguous
bfloat16 ``[M, N]`` tensor accumulated in float32.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from units.persistent_splitk.kernel import SPLIT_BLOCK_K, SPLIT_BLOCK_M, SPLIT_BLOCK_N, SPLIT_STAGES, SPLIT_WARPS


@triton.jit
def _tile_matmul_kernel(
    a_ptr, b_ptr, c_ptr,
    M, N, K,
    stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):
    pid = tl.program_id(0)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    pid_m = pid // num_pid_n
    pid_n = pid % num_pid_n

    offs_am = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M  # [BM]
    offs_bn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N  # [BN]
    offs_k = tl.arange(0, BLOCK_K)  # [BK]
    a_ptrs = a_ptr + offs_am[:, None].to(tl.int64) * stride_am + offs_k[None, :] * stride_ak  # [BM, BK]
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_bn[None, :].to(tl.int64) * stride_bn  # [BK, BN]

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(tl.cdiv(K, BLOCK_K)):
        k_left = K - k * BLOCK_K
        a = tl.load(a_ptrs, mask=offs_k[None, :] < k_left, other=0.0)  # [BM, BK]
        b = tl.load(b_ptrs, mask=offs_k[:, None] < k_left, other=0.0)  # [BK, BN]
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk

    offs_cm = pid_m.to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)  # [BM]
    offs_cn = pid_n.to(tl.int64) * BLOCK_N + tl.arange(0, BLOCK_N)  # [BN]
    c_ptrs = c_ptr + offs_cm[:, None] * stride_cm + offs_cn[None, :] * stride_cn  # [BM, BN]
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=(offs_cm[:, None] < M) & (offs_cn[None, :] < N))


def matmul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """``a [M, K] bf16 @ b [K, N] bf16 -> [M, N] bf16``, fp32 accumulation, one program per tile."""
    m, k = a.shape
    n = b.shape[1]
    c = torch.empty((m, n), dtype=a.dtype, device=a.device)
    grid = (triton.cdiv(m, SPLIT_BLOCK_M) * triton.cdiv(n, SPLIT_BLOCK_N),)
    _tile_matmul_kernel[grid](
        a, b, c, m, n, k,
        a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
        BLOCK_M=SPLIT_BLOCK_M, BLOCK_N=SPLIT_BLOCK_N, BLOCK_K=SPLIT_BLOCK_K,
        num_stages=SPLIT_STAGES, num_warps=SPLIT_WARPS,
    )
    return c
