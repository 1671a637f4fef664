"""Tiled bf16 GEMM with grouped (L2-aware) tile order: ``c = a @ b``.

Strategy: consecutive program ids walk ``GROUP_M`` tile-rows column by column, so the CTAs resident
at one time share a few A row-strips and B column-strips in L2 instead of streaming all of B.

Inputs ``a [M, K]`` and ``b [K, N]`` are bfloat16 with any strides; the output is a contiguous
bfloat16 ``[M, N]`` tensor accumulated in float32. One program computes one ``[BLOCK_M, BLOCK_N]``
tile. Row and column indices wrap modulo M and N so edge tiles load in bounds without masks; K is
masked; stores are masked.

Example::

    a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    c = matmul(a, b)  # [8192, 8192] bf16
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

# 128x128 tiles make the ungrouped order's L2 working set (all of B per pair of tile-rows) far
# larger than H200's 50 MB L2 at 8192^3, which is what the unit measures; 4 stages of A and B
# tiles take 128 KB of shared memory. GROUP_M = 8 is the Triton tutorial's value: 132 resident
# CTAs then cover 8 tile-rows x ~17 tile-columns (16 MB of A, 33 MB of B per K sweep).
BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M = 128, 128, 64, 8
NUM_STAGES, NUM_WARPS = 4, 8
# The tiles of the gemm_bf16 task's expert solution (one Hopper configuration: 128x256x64 tiles,
# 3 stages, 8 warps), at which the naive kernels of the fp8 and fp4 GEMM units run their bf16 pass.
HOUSE_BF16_GEMM_TILES = {"block_m": 128, "block_n": 256, "block_k": 64, "group_m": 8, "num_stages": 3, "num_warps": 8}


@triton.jit
def grouped_tile(tile, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, GROUP_M: tl.constexpr):
    """``(pid_m, pid_n)`` of output tile ``tile`` (a program id, or a persistent kernel's tile
    counter) in grouped order: consecutive tiles walk ``GROUP_M`` tile-rows column by column (the
    last band may be shorter). Every GEMM kernel of the units calls this."""
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_in_group = GROUP_M * tl.cdiv(N, BLOCK_N)
    first_pid_m = (tile // num_pid_in_group) * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + (tile % num_pid_in_group) % group_size_m
    pid_n = (tile % num_pid_in_group) // group_size_m
    return pid_m, pid_n


@triton.jit
def _grouped_matmul_kernel(
    a_ptr, b_ptr, c_ptr,
    M, N, K,
    stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
):
    pid_m, pid_n = grouped_tile(tl.program_id(0), M, N, BLOCK_M, BLOCK_N, GROUP_M)

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
    a: torch.Tensor, b: torch.Tensor, *, block_m: int = BLOCK_M, block_n: int = BLOCK_N, block_k: int = BLOCK_K,
    group_m: int = GROUP_M, num_stages: int = NUM_STAGES, num_warps: int = NUM_WARPS,
) -> torch.Tensor:
    """``a [M, K] bf16 @ b [K, N] bf16 -> [M, N] bf16``, fp32 accumulation, tiles in grouped order.

    The tile configuration defaults to this unit's; other units reuse this kernel with their own
    (``software_pipelining`` varies ``num_stages``; the naive kernels of ``tma_descriptors`` and
    ``epilogue_fusion`` are this GEMM at their tiles, those of ``fp8_scaled_gemm``, ``mxfp4_gemm``
    and ``nvfp4_gemm`` at ``HOUSE_BF16_GEMM_TILES``).
    """
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[0]:
        raise ValueError(f"expected a [M, K] and b [K, N], got {tuple(a.shape)} and {tuple(b.shape)}")
    if a.dtype != torch.bfloat16 or b.dtype != torch.bfloat16:
        raise TypeError(f"expected bfloat16 inputs, got {a.dtype} and {b.dtype}")
    m, k = a.shape
    n = b.shape[1]
    c = torch.empty((m, n), dtype=a.dtype, device=a.device)
    grid = (triton.cdiv(m, block_m) * triton.cdiv(n, block_n),)
    _grouped_matmul_kernel[grid](
        a, b, c, m, n, k,
        a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
        BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_K=block_k, GROUP_M=group_m,
        num_stages=num_stages, num_warps=num_warps,
    )
    return c
