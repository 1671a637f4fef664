"""MXFP4 block-scaled GEMM on Hopper: ``out = a @ decode(B)``, B's e2m1 codes decoded in registers.

``a`` is bfloat16 ``[M, K]``; ``B [K, N]`` arrives in MXFP4 (see ``reference.py``): packed uint8
``[K/2, N]`` (two e2m1 codes per byte along K, low nibble first) and e8m0 scales uint8
``[K/32, N]`` (value ``2^(s - 127)``). Hopper has no FP4 tensor cores, so each K step loads the
packed tile (a quarter of bf16's bytes), turns every nibble into bf16 bits with integer ops,
multiplies by its block's power-of-two scale (exact), interleaves the even and odd K rows back
into a ``[BLOCK_K, BLOCK_N]`` tile and feeds a bf16 ``tl.dot`` with a float32 accumulator. The
decoded weight never exists in global memory.

e2m1 -> bf16 bits: magnitude bits ``x = e1 e0 m``; for ``x >= 2`` (normal) the bf16 pattern is
``(x << 6) + (126 << 7)`` (exponent ``e + 126`` = rebias 1 -> 127, mantissa bit ``m`` at bit 6);
``x == 1`` is the subnormal 0.5 (``0x3F00``); ``x == 0`` is zero; the sign bit moves from bit 3 to
bit 15. The e8m0 scale ``s`` as bf16 is the bit pattern ``s << 7`` (exact for 1 <= s <= 254).
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

# Tiles by M, the fastest of H200 sweeps (2026-11-30). M=256, N=K=8192: 256x64x128 in 3 stages with
# 8 warps ran 0.246 ms (mxfp4) and 0.221 ms (nvfp4) against 0.280 and 0.344 ms for 128x128x128. M=32
# (decode-sized, <= SMALL_M): 64x64x128 in 3 stages with 4 warps ran 0.163 ms at M=32 (naive 0.178
# ms).
# Decoding two nibble planes into even and odd K rows and feeding two dots instead of interleaving them ran
# slower on the H200 (14 against 20 TFLOP/s at M=32), so the planes are interleaved before one dot.
SMALL_M = 64
LARGE_M_TILES = {"block_m": 256, "block_n": 64, "block_k": 128, "group_m": 8, "num_stages": 3, "num_warps": 8}
SMALL_M_TILES = {"block_m": 64, "block_n": 64, "block_k": 128, "group_m": 1, "num_stages": 3, "num_warps": 4}


def tiles_for(m: int) -> dict:
    """This unit's tile configuration for ``m`` activation rows (keywords of ``mxfp4_gemm``)."""
    return dict(SMALL_M_TILES if m <= SMALL_M else LARGE_M_TILES)


SCALE_GROUP = 32  # K values per e8m0 scale


@triton.jit
def e2m1_to_bf16(code):
    """e2m1 codes (any integer tensor holding 0..15) -> bfloat16 values, exactly."""
    x = code.to(tl.uint16)
    mag = x & 7
    normal = (mag << 6) + (126 << 7)
    bits = tl.where(mag >= 2, normal, tl.where(mag == 1, 0x3F00, 0).to(tl.uint16))
    return (bits.to(tl.uint16) | ((x & 8) << 12).to(tl.uint16)).to(tl.bfloat16, bitcast=True)


@triton.jit
def _mxfp4_gemm_kernel(
    a_ptr, bq_ptr, bs_ptr, c_ptr,
    M, N, K,
    stride_am, stride_ak, stride_bqk, stride_bqn, stride_bsk, stride_bsn, stride_cm, stride_cn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
    SCALE_GROUP: tl.constexpr,
):
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    first_pid_m = (pid // num_pid_in_group) * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m

    HALF_K: tl.constexpr = BLOCK_K // 2
    SCALE_ROWS: tl.constexpr = BLOCK_K // SCALE_GROUP
    offs_m = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M  # [BM]
    offs_n = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N  # [BN]
    offs_k = tl.arange(0, BLOCK_K)  # [BK]
    offs_kp = tl.arange(0, HALF_K)  # [BK/2] packed rows
    offs_ks = tl.arange(0, SCALE_ROWS)  # [BK/32] scale rows
    p_a = a_ptr + offs_m[:, None].to(tl.int64) * stride_am + offs_k[None, :] * stride_ak
    p_q = bq_ptr + offs_kp[:, None] * stride_bqk + offs_n[None, :] * stride_bqn
    p_s = bs_ptr + offs_ks[:, None] * stride_bsk + offs_n[None, :] * stride_bsn

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(tl.cdiv(K, BLOCK_K)):
        k_left = K - k * BLOCK_K
        b_a = tl.load(p_a, mask=offs_k[None, :] < k_left, other=0.0)  # [BM, BK] bf16
        b_q = tl.load(p_q, mask=offs_kp[:, None] < k_left // 2, other=0)  # [BK/2, BN] uint8
        b_s = tl.load(p_s, mask=offs_ks[:, None] < k_left // SCALE_GROUP, other=0)  # [BK/32, BN]
        b_scale = (b_s.to(tl.uint16) << 7).to(tl.bfloat16, bitcast=True)  # [BK/32, BN]
        b_scale = tl.reshape(tl.broadcast_to(b_scale[:, None, :], (SCALE_ROWS, SCALE_GROUP // 2, BLOCK_N)),
                             (HALF_K, BLOCK_N))  # [BK/2, BN]: packed row i uses scale row i // 16
        b_lo = e2m1_to_bf16(b_q & 0xF) * b_scale  # [BK/2, BN]: K rows 0, 2, 4, ...
        b_hi = e2m1_to_bf16(b_q >> 4) * b_scale  # [BK/2, BN]: K rows 1, 3, 5, ...
        b_b = tl.reshape(tl.permute(tl.join(b_lo, b_hi), (0, 2, 1)), (BLOCK_K, BLOCK_N))  # [BK, BN]
        acc = tl.dot(b_a, b_b, acc)
        p_a += BLOCK_K * stride_ak
        p_q += HALF_K * stride_bqk
        p_s += SCALE_ROWS * stride_bsk

    offs_cm = pid_m.to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_cn = pid_n.to(tl.int64) * BLOCK_N + tl.arange(0, BLOCK_N)
    p_c = c_ptr + offs_cm[:, None] * stride_cm + offs_cn[None, :] * stride_cn
    tl.store(p_c, acc.to(tl.bfloat16), mask=(offs_cm[:, None] < M) & (offs_cn[None, :] < N))


def mxfp4_gemm(
    a: torch.Tensor, b_packed: torch.Tensor, b_scales: torch.Tensor, *, block_m: int | None = None,
    block_n: int | None = None, block_k: int | None = None, group_m: int | None = None,
    num_stages: int | None = None, num_warps: int | None = None,
) -> torch.Tensor:
    """``a @ B`` with ``B`` given in MXFP4.

    Args:
        a: bfloat16 ``[M, K]``, any strides; K a multiple of 32.
        b_packed: uint8 ``[K/2, N]``, two e2m1 codes per byte along K (low nibble = even row).
        b_scales: uint8 ``[K/32, N]``, e8m0 exponents (``2^(s - 127)``).
        block_m, block_n, block_k, group_m, num_stages, num_warps: the tile configuration;
            ``tiles_for(M)`` fills any left out; ``block_k`` is a power of two >= 32 (whole scale groups).

    Returns:
        bfloat16 ``[M, N]``, contiguous.

    Example::

        from units.mxfp4_gemm.reference import quantize_mxfp4
        w = torch.randn(4096, 1024, device="cuda")
        packed, scales = quantize_mxfp4(w)            # [2048, 1024], [128, 1024]
        x = torch.randn(16, 4096, device="cuda", dtype=torch.bfloat16)
        y = mxfp4_gemm(x, packed, scales)             # [16, 1024] bf16
    """
    m, k = a.shape
    n = b_packed.shape[1]
    given = {"block_m": block_m, "block_n": block_n, "block_k": block_k, "group_m": group_m,
             "num_stages": num_stages, "num_warps": num_warps}
    tiles = {**tiles_for(m), **{key: v for key, v in given.items() if v is not None}}
    block_m, block_n, block_k = tiles["block_m"], tiles["block_n"], tiles["block_k"]
    group_m, num_stages, num_warps = tiles["group_m"], tiles["num_stages"], tiles["num_warps"]
    if a.dtype != torch.bfloat16 or b_packed.dtype != torch.uint8 or b_scales.dtype != torch.uint8:
        raise TypeError(f"need bf16 a and uint8 b_packed/b_scales, got {a.dtype}, {b_packed.dtype}, "
                        f"{b_scales.dtype}")
    if k % SCALE_GROUP or tuple(b_packed.shape) != (k // 2, n) or tuple(b_scales.shape) != (k // SCALE_GROUP, n):
        raise ValueError(f"K={k} must be a multiple of {SCALE_GROUP} with b_packed [K/2, N] and b_scales "
                         f"[K/32, N]; got {tuple(b_packed.shape)} and {tuple(b_scales.shape)}")
    if block_k < SCALE_GROUP or block_k & (block_k - 1):
        raise ValueError(f"block_k={block_k} must be a power of two >= {SCALE_GROUP}")
    c = torch.empty((m, n), dtype=torch.bfloat16, device=a.device)
    grid = (triton.cdiv(m, block_m) * triton.cdiv(n, block_n),)
    _mxfp4_gemm_kernel[grid](
        a, b_packed, b_scales, c, m, n, k,
        a.stride(0), a.stride(1), b_packed.stride(0), b_packed.stride(1),
        b_scales.stride(0), b_scales.stride(1), c.stride(0), c.stride(1),
        BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_K=block_k, GROUP_M=group_m, SCALE_GROUP=SCALE_GROUP,
        num_stages=num_stages, num_warps=num_warps,
    )
    return c
