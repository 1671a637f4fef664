"""``grouped_tile_order`` without the strategy: the same tiled bf16 GEMM in row-major tile order.

Program ``pid`` computes tile ``(pid // num_pid_n, pid % num_pid_n)``: the CTAs resident at one time
span one or two tile-rows and every tile-column, so each wave streams all of B through L2. Tiles,
pipeline depth and warps are those of ``kernel.py``; only the program-to-tile map differs.

Inputs ``a [M, K]`` and ``b [K, N]`` are bfloat16 with any strides; the output is a contiguous
bfloat16 ``[M, N]`` tensor accumulated in float32.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from units.grouped_tile_order.kernel import BLOCK_K, BLOCK_M, BLOCK_N, NUM_STAGES, NUM_WARPS


@triton.jit
def _row_major_matmul_kernel(
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


def matmul(
    a: torch.Tensor, b: torch.Tensor, *, block_m: int = BLOCK_M, block_n: int = BLOCK_N,
    block_k: int = BLOCK_K, num_stages: int = NUM_STAGES, num_warps: int = NUM_WARPS,
) -> torch.Tensor:
    """``a [M, K] bf16 @ b [K, N] bf16 -> [M, N] bf16``, fp32 accumulation, tiles in row-major order,
    one program per output tile. The tile configuration defaults to ``kernel.py``'s; other units
    reuse this as their naive baseline with their own tiles (``persistent_splitk``)."""
    m, k = a.shape
    n = b.shape[1]
    c = torch.empty((m, n), dtype=a.dtype, device=a.device)
    grid = (triton.cdiv(m, block_m) * triton.cdiv(n, block_n),)
    _row_major_matmul_kernel[grid](
        a, b, c, m, n, k,
        a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
        BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_K=block_k,
        num_stages=num_stages, num_warps=num_warps,
    )
    return c
