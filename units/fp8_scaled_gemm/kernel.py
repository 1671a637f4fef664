"""FP8 e4m3 GEMM with per-tensor, per-row and 128x128 block scales, bf16 output.

``out[m, n] = sum_k (a[m, k] * sa) * (b[k, n] * sb)`` where ``a`` and ``b`` hold float8_e4m3fn
codes and the scales ``sa``/``sb`` are float32. Three scalings share one kernel:

- ``fp8_gemm_per_tensor``: one scale per operand, applied once in the epilogue;
- ``fp8_gemm_per_row``: ``scale_a_rows [M]`` and ``scale_b_cols [N]``, an outer product applied
  once in the epilogue (the scales do not vary along K, so they factor out of the sum);
- ``fp8_gemm_block``: DeepSeek-V3 style ``scale_a [ceil(M/128), ceil(K/128)]`` and
  ``scale_b [ceil(K/128), ceil(N/128)]``; the scales vary along K, so each 128-wide K step's
  partial product is scaled and added to the float32 accumulator ("promotion" to CUDA cores).

The fp8 operands go straight into ``tl.dot`` (wgmma fp8 on sm_90: twice the bf16 rate) with a
float32 accumulator. Hopper's fp8 wgmma reads both operands K-major from shared memory, so the
``b`` the kernel sees is a K-major view of ``[K, N]`` (``w.t()`` of a contiguous ``[N, K]`` weight).
With a row-major ``b`` Triton 3.x transposes in registers before the shared-memory store and turns
off the pipelined load for that operand (triton-lang/triton PR 6875 added a warning for exactly
this), so the wrapper copies a row-major ``b`` to K-major first: one extra pass over ``K*N`` bytes,
about 3% of an 8192^3 GEMM. Store static weights as ``[N, K]`` and pass ``w.t()`` to skip it.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

# 128x128x128 tiles, 4 stages, 8 warps (4 x 32 KiB of shared memory). H200 sweep at 8192^3, per-tensor
# scales (2026-11-30): 1.249 ms (881 TFLOP/s) against 1.429 ms for 128x256x128 in 3 stages, 1.321 ms
# for 128x128x128 in 3 stages with 4 warps, and 1.651 ms for 128x256x64. BLOCK_K must divide 128.
BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M = 128, 128, 128, 8
NUM_STAGES, NUM_WARPS = 4, 8
SCALE_BLOCK = 128

PER_TENSOR, PER_ROW, BLOCKWISE = 0, 1, 2


@triton.jit
def _fp8_gemm_kernel(
    a_ptr, b_ptr, c_ptr, sa_ptr, sb_ptr,
    M, N, K,
    stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
    stride_sa0, stride_sa1, stride_sb0, stride_sb1,
    SCALING: tl.constexpr, SCALE_BLOCK: tl.constexpr,
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

    offs_m = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M  # [BM], wrapped: loads stay in bounds
    offs_n = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N  # [BN]
    offs_k = tl.arange(0, BLOCK_K)  # [BK]
    p_a = a_ptr + offs_m[:, None].to(tl.int64) * stride_am + offs_k[None, :] * stride_ak
    p_b = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :].to(tl.int64) * stride_bn

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(tl.cdiv(K, BLOCK_K)):
        k_left = K - k * BLOCK_K
        b_a = tl.load(p_a, mask=offs_k[None, :] < k_left, other=0.0)  # [BM, BK] fp8
        b_b = tl.load(p_b, mask=offs_k[:, None] < k_left, other=0.0)  # [BK, BN] fp8
        if SCALING == 2:
            kb = (k * BLOCK_K) // SCALE_BLOCK
            b_sa = tl.load(sa_ptr + (offs_m // SCALE_BLOCK) * stride_sa0 + kb * stride_sa1)  # [BM]
            b_sb = tl.load(sb_ptr + kb * stride_sb0 + (offs_n // SCALE_BLOCK) * stride_sb1)  # [BN]
            acc += tl.dot(b_a, b_b) * (b_sa[:, None] * b_sb[None, :])
        else:
            # Hopper's fp8 wgmma accumulates in reduced precision; Triton on sm_90 lets it run over
            # the whole K loop unless told otherwise. At 8192^3 with all-positive (uniform) inputs
            # that gave 3.0e-2 relative L2 error on the H200 (2026-11-30), past the bf16 bound.
            # Promoting into the float32 accumulator after every BLOCK_K products keeps it exact
            # to fp32 rounding, as cuBLAS does unless asked for fast accumulation.
            acc = tl.dot(b_a, b_b, acc, max_num_imprecise_acc=BLOCK_K)
        p_a += BLOCK_K * stride_ak
        p_b += BLOCK_K * stride_bk

    if SCALING == 0:
        acc = acc * (tl.load(sa_ptr) * tl.load(sb_ptr))
    elif SCALING == 1:
        b_sa = tl.load(sa_ptr + offs_m * stride_sa0)  # [BM]
        b_sb = tl.load(sb_ptr + offs_n * stride_sb0)  # [BN]
        acc = acc * b_sa[:, None] * b_sb[None, :]

    offs_cm = pid_m.to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_cn = pid_n.to(tl.int64) * BLOCK_N + tl.arange(0, BLOCK_N)
    p_c = c_ptr + offs_cm[:, None] * stride_cm + offs_cn[None, :] * stride_cn
    tl.store(p_c, acc.to(tl.bfloat16), mask=(offs_cm[:, None] < M) & (offs_cn[None, :] < N))


def _check(a: torch.Tensor, b: torch.Tensor) -> tuple[int, int, int]:
    if a.dtype != torch.float8_e4m3fn or b.dtype != torch.float8_e4m3fn:
        raise TypeError(f"a and b must be float8_e4m3fn, got {a.dtype} and {b.dtype}")
    if a.dim() != 2 or b.dim() != 2 or a.shape[1] != b.shape[0]:
        raise ValueError(f"need a [M, K] and b [K, N], got {tuple(a.shape)} and {tuple(b.shape)}")
    return a.shape[0], b.shape[1], a.shape[1]


def _launch(
    a, b, sa, sb, scaling: int, *, block_m: int = BLOCK_M, block_n: int = BLOCK_N, block_k: int = BLOCK_K,
    group_m: int = GROUP_M, num_stages: int = NUM_STAGES, num_warps: int = NUM_WARPS,
) -> torch.Tensor:
    """Launch the kernel; the keyword tiles default to this unit's and are what the public
    functions' ``**tiles`` override (``block_m``, ``block_n``, ``block_k``, ``group_m``,
    ``num_stages``, ``num_warps``)."""
    m, n, k = _check(a, b)
    if scaling == BLOCKWISE and SCALE_BLOCK % block_k:
        raise ValueError(f"block_k={block_k} must divide the {SCALE_BLOCK}-wide scale blocks")
    if b.stride(0) != 1:
        b = b.t().contiguous().t()  # K-major for fp8 wgmma (see the module docstring)
    c = torch.empty((m, n), dtype=torch.bfloat16, device=a.device)
    sa2 = sa if sa.dim() == 2 else sa.reshape(-1, 1)
    sb2 = sb if sb.dim() == 2 else sb.reshape(-1, 1)
    grid = (triton.cdiv(m, block_m) * triton.cdiv(n, block_n),)
    _fp8_gemm_kernel[grid](
        a, b, c, sa2, sb2, m, n, k,
        a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
        sa2.stride(0), sa2.stride(1), sb2.stride(0), sb2.stride(1),
        SCALING=scaling, SCALE_BLOCK=SCALE_BLOCK,
        BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_K=block_k, GROUP_M=group_m,
        num_stages=num_stages, num_warps=num_warps,
    )
    return c


def fp8_gemm_per_tensor(a_fp8: torch.Tensor, b_fp8: torch.Tensor, scale_a: torch.Tensor,
                        scale_b: torch.Tensor, **tiles: int) -> torch.Tensor:
    """``(a * scale_a) @ (b * scale_b)`` in bf16.

    Args:
        a_fp8: float8_e4m3fn ``[M, K]``, any strides.
        b_fp8: float8_e4m3fn ``[K, N]``; K-major (``stride(0) == 1``) is used as is, any other
            layout is first copied to K-major.
        scale_a, scale_b: float32 one-element tensors on the same device (read in the kernel: no
            host sync).
        **tiles: tile overrides for another shape (``block_m``, ``block_n``, ``block_k``,
            ``group_m``, ``num_stages``, ``num_warps``); this unit's configuration by default.

    Returns:
        bfloat16 ``[M, N]``, contiguous.

    Example::

        a = torch.randn(256, 512, device="cuda").to(torch.float8_e4m3fn)
        b = torch.randn(512, 128, device="cuda").to(torch.float8_e4m3fn)
        one = torch.ones(1, device="cuda")
        out = fp8_gemm_per_tensor(a, b, one, one)  # [256, 128] bf16
    """
    return _launch(a_fp8, b_fp8, scale_a.float().reshape(1), scale_b.float().reshape(1), PER_TENSOR, **tiles)


def fp8_gemm_per_row(a: torch.Tensor, b: torch.Tensor, scale_a_rows: torch.Tensor,
                     scale_b_cols: torch.Tensor, **tiles: int) -> torch.Tensor:
    """``diag(scale_a_rows) (a @ b) diag(scale_b_cols)`` in bf16 (per-token x per-channel).

    Args:
        a: float8_e4m3fn ``[M, K]``; b: float8_e4m3fn ``[K, N]``.
        scale_a_rows: float32 ``[M]``; scale_b_cols: float32 ``[N]``.
        **tiles: tile overrides, as for ``fp8_gemm_per_tensor``.

    Returns:
        bfloat16 ``[M, N]``.

    Example::

        out = fp8_gemm_per_row(a, b, torch.rand(256, device="cuda"), torch.rand(128, device="cuda"))
    """
    return _launch(a, b, scale_a_rows.float(), scale_b_cols.float(), PER_ROW, **tiles)


def fp8_gemm_block(a: torch.Tensor, b: torch.Tensor, scale_a: torch.Tensor,
                   scale_b: torch.Tensor, **tiles: int) -> torch.Tensor:
    """Block-scaled fp8 GEMM: every 128x128 block of ``a`` and ``b`` carries its own scale.

    ``out = sum over K-blocks kb of (a[:, kb] @ b[kb, :]) * scale_a[m // 128, kb] *
    scale_b[kb, n // 128]``, accumulated in float32.

    Args:
        a: float8_e4m3fn ``[M, K]``; b: float8_e4m3fn ``[K, N]``.
        scale_a: float32 ``[ceil(M/128), ceil(K/128)]``; scale_b: float32
            ``[ceil(K/128), ceil(N/128)]`` (any strides: ``s.t()`` of ``[ceil(N/128), ceil(K/128)]``
            weight-block scales works).
        **tiles: tile overrides, as for ``fp8_gemm_per_tensor``; ``block_k`` must divide 128.

    Returns:
        bfloat16 ``[M, N]``.

    Example::

        sa = torch.rand(2, 4, device="cuda"); sb = torch.rand(4, 1, device="cuda")
        out = fp8_gemm_block(a, b, sa, sb)  # a [256, 512], b [512, 128]
    """
    m, n, k = _check(a, b)
    want_a = (triton.cdiv(m, SCALE_BLOCK), triton.cdiv(k, SCALE_BLOCK))
    want_b = (triton.cdiv(k, SCALE_BLOCK), triton.cdiv(n, SCALE_BLOCK))
    if tuple(scale_a.shape) != want_a or tuple(scale_b.shape) != want_b:
        raise ValueError(f"block scales must be {want_a} and {want_b}, "
                         f"got {tuple(scale_a.shape)} and {tuple(scale_b.shape)}")
    return _launch(a, b, scale_a.float(), scale_b.float(), BLOCKWISE, **tiles)
