"""Block-scaled FP4 GEMM on Hopper, shared by ``mxfp4_gemm`` and ``nvfp4_gemm``: ``out = a @ decode(B)``.

``a`` is bfloat16 ``[M, K]``; ``B [K, N]`` is packed uint8 ``[K/2, N]`` (two e2m1 codes per byte
along K, low nibble first) with one block scale per ``G`` K values, ``[K/G, N]``: e8m0 exponents
(MXFP4, G = 32) or float8 e4m3 values (NVFP4, G = 16, plus one float32 tensor scale). Hopper has no
FP4 tensor cores, so each K step loads the packed tile, decodes every nibble to bf16 in registers,
multiplies it by its block's scale (exact in bf16: an e2m1 value has 2 significant bits, a scale
at most 4), and feeds bf16 ``tl.dot`` with a float32 accumulator; the decoded weight never exists
in global memory. The two formats differ only in the scale's decode (``_multiplier``) and NVFP4's
tensor scale, applied once to the accumulator.

Variants (keywords of the units' wrappers, ``configure``): ``decode`` ("select": integer decode
with compares; "bits": fp16 bit placement and one multiply; "dot_scaled": Triton's
``tl.dot_scaled``, e8m0 scales only; "lut": four packed bytes per PTX block of byte-table lookups,
``units/fp4_ptx.py``, with two_dot, expand_scales and no swap_ab, the A tile loaded whole and split
into its even and odd K columns in registers), ``unpack`` ("join": interleave the two nibble planes into one
tile; "two_dot": one dot per plane against A's even and odd K columns), ``swap_ab`` (``out^T =
B^T a^T``, the decoded weight as the MMA's register operand), ``split_k`` (float32 partials summed
by ``_split_sum_kernel``) and ``expand_scales`` (one scale load per packed code).

e2m1 -> bf16 bits: magnitude bits ``x = e1 e0 m``; for ``x >= 2`` (normal) the bf16 pattern is
``(x << 6) + (126 << 7)`` (exponent ``e + 126`` = rebias 1 -> 127, mantissa bit ``m`` at bit 6);
``x == 1`` is the subnormal 0.5 (``0x3F00``); ``x == 0`` is zero; the sign bit moves from bit 3 to
bit 15. The e8m0 scale ``s`` as bf16 is the bit pattern ``s << 7`` (exact for 1 <= s <= 254).
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from units import fp4_ptx
from units.grouped_tile_order.kernel import grouped_tile

BITS_BIAS = tl.constexpr(14)  # "bits": an e2m1 code placed in fp16's fields reads as value * 2^-14 ...
BITS_SCALE = tl.constexpr(16384.0)  # ... so the block scale carries 2^14 (e8m0: +14 on the exponent)
SPLIT_SUM_BLOCK = 1024  # elements per program of the split-K sum: 4 KB of float32 per split, a streaming pass
DECODES = {"e8m0": ("select", "bits", "dot_scaled", "lut"), "e4m3": ("select", "bits", "lut")}
UNPACKS = ("join", "two_dot")


@triton.jit
def e2m1_to_bf16(code):
    """e2m1 codes (any integer tensor holding 0..15) -> bfloat16 values, exactly."""
    x = code.to(tl.uint16)
    mag = x & 7
    normal = (mag << 6) + (126 << 7)
    bits = tl.where(mag >= 2, normal, tl.where(mag == 1, 0x3F00, 0).to(tl.uint16))
    return (bits.to(tl.uint16) | ((x & 8) << 12).to(tl.uint16)).to(tl.bfloat16, bitcast=True)


@triton.jit
def e2m1_to_f16_unbiased(code):
    """e2m1 codes (0..15) -> float16 ``value * 2^-14``, exactly, with no compare or select.

    The magnitude bits ``e1 e0 m`` go to fp16 bits 11, 10 (exponent) and 9 (mantissa): exponent
    field ``e`` reads ``(1 + m/2) * 2^(e - 15)`` for ``e >= 1`` and ``m * 2^-15`` (a subnormal) for
    ``e == 0``, both ``2^-14`` times the e2m1 value; bit 3 (sign) goes to bit 15.
    """
    x = code.to(tl.uint16)
    return (((x & 7) << 9) | ((x & 8) << 12)).to(tl.float16, bitcast=True)


@triton.jit
def _multiplier(b_s, SCALES: tl.constexpr, DECODE: tl.constexpr):
    """Block scales -> the bf16 multiplier of the decode. e8m0 codes ``s``: ``2^(s - 127)``, or
    ``2^(s - 127 + 14)`` for "bits" (codes above 240 then saturate to inf). e4m3 values: the scale,
    or the scale times 2^14 for "bits" (at most 448 * 2^14, exact in bf16)."""
    if SCALES == "e8m0":
        s = b_s.to(tl.uint16)
        if DECODE == "bits":
            # Cast back: Triton 3.6 promotes the minimum with a Python int to int32, whose bitcast
            # to bf16 fails; the interpreter keeps uint16, so only a GPU compile showed it.
            s = tl.minimum(s + BITS_BIAS, 255).to(tl.uint16)
        return (s << 7).to(tl.bfloat16, bitcast=True)
    if DECODE == "bits":
        return (b_s.to(tl.float32) * BITS_SCALE).to(tl.bfloat16)
    return b_s.to(tl.bfloat16)


@triton.jit
def _decode(code, multiplier, DECODE: tl.constexpr):
    """e2m1 codes times their block scale as bf16 (``multiplier`` from ``_multiplier``)."""
    if DECODE == "bits":
        return e2m1_to_f16_unbiased(code).to(tl.bfloat16) * multiplier
    return e2m1_to_bf16(code) * multiplier


@triton.jit
def _planes(b_q, b_s, BLOCK_N: tl.constexpr, HALF_K: tl.constexpr, SCALE_ROWS: tl.constexpr,
            SCALE_GROUP: tl.constexpr, DECODE: tl.constexpr, SWAP_AB: tl.constexpr, EXPAND_SCALES: tl.constexpr,
            SCALES: tl.constexpr, PTX: tl.constexpr):
    """Packed codes ``b_q`` ([BK/2, BN], or [BN, BK/2] with swap_ab) and their scales -> the two bf16
    planes (K rows 0, 2, 4, ... and 1, 3, 5, ...), each shaped like ``b_q``. "lut" runs the PTX
    block when ``PTX`` (a GPU), else the select decode of the same values (the interpreter)."""
    if DECODE == "lut" and PTX and SCALES == "e8m0":
        b_lo, b_hi = fp4_ptx.planes_e8m0(b_q, b_s)
    else:
        b_mult = _multiplier(b_s, SCALES, "select" if DECODE == "lut" else DECODE)
        if SWAP_AB and not EXPAND_SCALES:  # [BN, BK/G] -> [BN, BK/2]: packed column i uses scale i // (G/2)
            b_mult = tl.reshape(tl.broadcast_to(b_mult[:, :, None], (BLOCK_N, SCALE_ROWS, SCALE_GROUP // 2)),
                                (BLOCK_N, HALF_K))
        elif not EXPAND_SCALES:  # [BK/G, BN] -> [BK/2, BN]: packed row i uses scale row i // (G/2)
            b_mult = tl.reshape(tl.broadcast_to(b_mult[:, None, :], (SCALE_ROWS, SCALE_GROUP // 2, BLOCK_N)),
                                (HALF_K, BLOCK_N))
        if DECODE == "lut" and PTX:
            b_lo, b_hi = fp4_ptx.planes_bf16(b_q, b_mult)
        else:
            b_lo = _decode(b_q & 0xF, b_mult, "select" if DECODE == "lut" else DECODE)
            b_hi = _decode(b_q >> 4, b_mult, "select" if DECODE == "lut" else DECODE)
    return b_lo, b_hi


@triton.jit
def _a_tile(a_ptr, offs_m, stride_am, stride_ak, BLOCK_K: tl.constexpr, TWO_DOT: tl.constexpr,
            SWAP_AB: tl.constexpr, DECODE: tl.constexpr):
    """The A tile's K offsets within a step and its pointers: [BM, BK], [BK, BM] (swap_ab), or for
    two_dot [BM, BK/2, 2] and [BK/2, BM, 2], whose last axis (K parity) tl.split takes apart.
    dot_scaled with swap_ab loads [BM, BK] and transposes it in the call; lut loads [BM, BK] (whole
    16-byte rows) and splits it in registers."""
    offs_k = tl.arange(0, BLOCK_K)  # [BK]
    offs_kp = tl.arange(0, BLOCK_K // 2)  # [BK/2] packed rows
    offs_par = tl.arange(0, 2)  # [2] K parity, the last axis of two_dot's A tiles
    if TWO_DOT and SWAP_AB:
        ka = 2 * offs_kp[:, None, None] + offs_par[None, None, :]
        p_a = a_ptr + offs_m[None, :, None].to(tl.int64) * stride_am + ka * stride_ak
    elif TWO_DOT and DECODE != "lut":
        ka = 2 * offs_kp[None, :, None] + offs_par[None, None, :]
        p_a = a_ptr + offs_m[:, None, None].to(tl.int64) * stride_am + ka * stride_ak
    elif SWAP_AB and DECODE != "dot_scaled":
        ka = offs_k[:, None]
        p_a = a_ptr + offs_m[None, :].to(tl.int64) * stride_am + ka * stride_ak
    else:
        ka = offs_k[None, :]
        p_a = a_ptr + offs_m[:, None].to(tl.int64) * stride_am + ka * stride_ak
    return ka, p_a


@triton.jit
def _mma_step(acc, b_a, b_q, b_s, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, SCALE_GROUP: tl.constexpr,
              DECODE: tl.constexpr, TWO_DOT: tl.constexpr, SWAP_AB: tl.constexpr, EXPAND_SCALES: tl.constexpr,
              SCALES: tl.constexpr, PTX: tl.constexpr):
    """``acc`` plus one K tile's product: bf16 ``b_a`` (shaped as ``_a_tile``'s), packed e2m1 codes
    ``b_q`` and their block scales ``b_s``, decoded to bf16 for ``tl.dot`` or passed to
    ``tl.dot_scaled`` as they are."""
    HALF_K: tl.constexpr = BLOCK_K // 2
    SCALE_ROWS: tl.constexpr = BLOCK_K // SCALE_GROUP
    # One return at the end: Triton's front end does not end a function at a return inside a branch.
    if DECODE == "dot_scaled":
        if SWAP_AB:  # [BN, BK/2 packed] x [BK, BM]
            acc = tl.dot_scaled(b_q, b_s, "e2m1", tl.trans(b_a), None, "bf16", acc=acc)
        else:  # [BM, BK] x [BK/2 packed, BN]
            acc = tl.dot_scaled(b_a, None, "bf16", b_q, tl.trans(b_s), "e2m1", acc=acc)
    else:
        b_lo, b_hi = _planes(b_q, b_s, BLOCK_N, HALF_K, SCALE_ROWS, SCALE_GROUP, DECODE, SWAP_AB, EXPAND_SCALES,
                             SCALES, PTX)
        if TWO_DOT:
            if DECODE == "lut":  # [BM, BK] -> [BM, BK/2, 2]: K parity last
                b_a = tl.reshape(b_a, (b_a.shape[0], HALF_K, 2))
            b_a_even, b_a_odd = tl.split(b_a)  # [BM, BK/2] each, or [BK/2, BM] for swap_ab
            if SWAP_AB:
                acc = tl.dot(b_lo, b_a_even, acc)  # [BN, BK/2] x [BK/2, BM]
                acc = tl.dot(b_hi, b_a_odd, acc)
            else:
                acc = tl.dot(b_a_even, b_lo, acc)  # [BM, BK/2] x [BK/2, BN]
                acc = tl.dot(b_a_odd, b_hi, acc)
        elif SWAP_AB:
            acc = tl.dot(tl.interleave(b_lo, b_hi), b_a, acc)  # [BN, BK] x [BK, BM]
        else:
            b_b = tl.reshape(tl.permute(tl.join(b_lo, b_hi), (0, 2, 1)), (BLOCK_K, BLOCK_N))  # [BK, BN]
            acc = tl.dot(b_a, b_b, acc)
    return acc


@triton.jit
def _store_tile(c_ptr, acc, pid_m, pid_n, M, N, stride_cs, stride_cm, stride_cn, BLOCK_M: tl.constexpr,
                BLOCK_N: tl.constexpr, SWAP_AB: tl.constexpr):
    """Store the tile (``acc`` [BM, BN], or [BN, BM] with swap_ab) at split ``program_id(1)`` of
    ``c``: the bf16 output when SPLIT_K == 1, else the float32 workspace [SPLIT_K, M, N]."""
    offs_cm = pid_m.to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_cn = pid_n.to(tl.int64) * BLOCK_N + tl.arange(0, BLOCK_N)
    p_c = c_ptr + tl.program_id(1).to(tl.int64) * stride_cs
    if SWAP_AB:
        p_c += offs_cn[:, None] * stride_cn + offs_cm[None, :] * stride_cm
        tl.store(p_c, acc.to(c_ptr.dtype.element_ty), mask=(offs_cn[:, None] < N) & (offs_cm[None, :] < M))
    else:
        p_c += offs_cm[:, None] * stride_cm + offs_cn[None, :] * stride_cn
        tl.store(p_c, acc.to(c_ptr.dtype.element_ty), mask=(offs_cm[:, None] < M) & (offs_cn[None, :] < N))


@triton.jit
def _fp4_gemm_kernel(
    a_ptr, bq_ptr, bs_ptr, ts_ptr, c_ptr,
    M, N, K,
    stride_am, stride_ak, stride_bqk, stride_bqn, stride_bsk, stride_bsn, stride_cs, stride_cm, stride_cn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
    SPLIT_K: tl.constexpr, SCALE_GROUP: tl.constexpr, DECODE: tl.constexpr, TWO_DOT: tl.constexpr,
    SWAP_AB: tl.constexpr, EXPAND_SCALES: tl.constexpr, SCALES: tl.constexpr, PTX: tl.constexpr,
):
    """One output tile (one K split of it): the K loop of the module docstring; ``SCALES`` is the
    block-scale format ("e8m0" or "e4m3"), ``ts_ptr`` the float32 tensor scale or None, ``PTX``
    whether inline PTX may run (a GPU, not the interpreter)."""
    pid_m, pid_n = grouped_tile(tl.program_id(0), M, N, BLOCK_M, BLOCK_N, GROUP_M)
    # This program's K tiles: split pid_k of SPLIT_K takes a contiguous run (maybe empty).
    k_tiles = tl.cdiv(K, BLOCK_K)
    tiles_per_split = tl.cdiv(k_tiles, SPLIT_K)
    kt_begin = tl.program_id(1) * tiles_per_split
    kt_end = min(kt_begin + tiles_per_split, k_tiles)
    k0 = kt_begin.to(tl.int64) * BLOCK_K  # the run's first K, as base-pointer offsets in 64 bits
    a_ptr += k0 * stride_ak
    bq_ptr += k0 // 2 * stride_bqk
    bs_ptr += k0 // SCALE_GROUP * stride_bsk

    HALF_K: tl.constexpr = BLOCK_K // 2
    SCALE_ROWS: tl.constexpr = BLOCK_K // SCALE_GROUP
    offs_m = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M  # [BM]
    offs_n = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N  # [BN]
    offs_kp = tl.arange(0, HALF_K)  # [BK/2] packed rows
    offs_ks = tl.arange(0, SCALE_ROWS)  # [BK/G] scale rows
    ka, p_a = _a_tile(a_ptr, offs_m, stride_am, stride_ak, BLOCK_K, TWO_DOT, SWAP_AB, DECODE)
    # Weight tiles: packed codes [BK/2, BN], or [BN, BK/2] with swap_ab (the dot's left operand).
    # Scales: [BK/G, BN] (or [BN, BK/G]) for G = SCALE_GROUP, broadcast over G/2 packed rows in
    # registers, or with EXPAND_SCALES one scale per packed code, each loaded G/2 times, a load wide
    # enough for cp.async.
    if SWAP_AB:
        kq = offs_kp[None, :]
        nq = offs_n[:, None]
        ks = kq // (SCALE_GROUP // 2) if EXPAND_SCALES else offs_ks[None, :]
        acc = tl.zeros((BLOCK_N, BLOCK_M), dtype=tl.float32)
    else:
        kq = offs_kp[:, None]
        nq = offs_n[None, :]
        ks = kq // (SCALE_GROUP // 2) if EXPAND_SCALES else offs_ks[:, None]
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    p_q = bq_ptr + kq * stride_bqk + nq * stride_bqn
    p_s = bs_ptr + ks * stride_bsk + nq * stride_bsn

    for kt in range(kt_begin, kt_end):
        k_left = K - kt * BLOCK_K
        b_a = tl.load(p_a, mask=ka < k_left, other=0.0)  # bf16, shaped like ka
        b_q = tl.load(p_q, mask=kq < k_left // 2, other=0)  # uint8 codes
        if SCALES == "e8m0":
            b_s = tl.load(p_s, mask=ks < k_left // SCALE_GROUP, other=0)  # uint8 exponents
        else:
            b_s = tl.load(p_s, mask=ks < k_left // SCALE_GROUP, other=0.0)  # float8 e4m3
        acc = _mma_step(acc, b_a, b_q, b_s, BLOCK_N, BLOCK_K, SCALE_GROUP, DECODE, TWO_DOT, SWAP_AB, EXPAND_SCALES,
                        SCALES, PTX)
        p_a += BLOCK_K * stride_ak
        p_q += HALF_K * stride_bqk
        p_s += SCALE_ROWS * stride_bsk
    if ts_ptr is not None:  # NVFP4's tensor scale: constant over the tile, one multiply here
        acc = acc * tl.load(ts_ptr)
    _store_tile(c_ptr, acc, pid_m, pid_n, M, N, stride_cs, stride_cm, stride_cn, BLOCK_M, BLOCK_N, SWAP_AB)


@triton.jit
def _split_sum_kernel(ws_ptr, c_ptr, MN, SPLIT_K: tl.constexpr, BLOCK: tl.constexpr):
    """``c[i] = bf16(sum_s ws[s, i])`` over a contiguous float32 ``[SPLIT_K, M*N]`` workspace."""
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)  # [BLOCK]
    mask = offs < MN
    p_ws = ws_ptr + offs
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for _ in range(SPLIT_K):
        acc += tl.load(p_ws, mask=mask, other=0.0)
        p_ws += MN
    tl.store(c_ptr + offs, acc.to(tl.bfloat16), mask=mask)


def configure(defaults: dict, given: dict, scales: str, scale_group: int) -> dict:
    """The launch configuration: ``defaults`` (the unit's ``tiles_for(M)``) overridden by the keywords
    in ``given`` that are not None, checked; ``ValueError`` names what is wrong."""
    cfg = {**defaults, **{key: v for key, v in given.items() if v is not None}}
    block_k, decodes = cfg["block_k"], DECODES[scales]
    if block_k < scale_group or block_k & (block_k - 1):
        raise ValueError(f"block_k={block_k} must be a power of two >= {scale_group}")
    if cfg["decode"] not in decodes or cfg["unpack"] not in UNPACKS or cfg["split_k"] < 1:
        raise ValueError(f"decode must be one of {decodes}, unpack one of {UNPACKS}, split_k >= 1; got "
                         f"{cfg['decode']!r}, {cfg['unpack']!r}, {cfg['split_k']}")
    if cfg["unpack"] == "two_dot" and block_k < 32:
        raise ValueError(f"unpack='two_dot' dots [*, block_k/2] tiles: block_k={block_k} must be >= 32")
    if cfg["decode"] == "lut" and (cfg["unpack"] != "two_dot" or not cfg["expand_scales"] or cfg["swap_ab"]):
        raise ValueError("decode='lut' decodes four packed bytes and their four scales at once into the two "
                         "planes: it needs unpack='two_dot', expand_scales=True and swap_ab=False")
    if cfg["decode"] == "dot_scaled" and (cfg["unpack"] != "join" or cfg["expand_scales"]):
        raise ValueError(f"decode='dot_scaled' takes the packed tile and [BN, BK/{scale_group}] scales as they "
                         "are: unpack='two_dot' and expand_scales do not apply")
    return cfg


def fp4_gemm(a: torch.Tensor, b_packed: torch.Tensor, b_scales: torch.Tensor, tensor_scale: torch.Tensor | None,
             cfg: dict, scales: str, scale_group: int) -> torch.Tensor:
    """Launch ``_fp4_gemm_kernel`` (and the split-K sum) for inputs the unit wrapper has checked.

    ``a`` bf16 ``[M, K]``; ``b_packed`` uint8 ``[K/2, N]``; ``b_scales`` ``[K/scale_group, N]`` in
    the ``scales`` format; ``tensor_scale`` a float32 one-element tensor or None; ``cfg`` from
    ``configure``. Returns bfloat16 ``[M, N]``, contiguous."""
    m, k = a.shape
    n = b_packed.shape[1]
    split = cfg["split_k"]
    c = torch.empty((m, n), dtype=torch.bfloat16, device=a.device)
    out = c if split == 1 else torch.empty((split, m, n), dtype=torch.float32, device=a.device)
    stride_cs = 0 if split == 1 else out.stride(0)
    grid = (triton.cdiv(m, cfg["block_m"]) * triton.cdiv(n, cfg["block_n"]), split)
    _fp4_gemm_kernel[grid](
        a, b_packed, b_scales, tensor_scale, out, m, n, k,
        a.stride(0), a.stride(1), b_packed.stride(0), b_packed.stride(1),
        b_scales.stride(0), b_scales.stride(1), stride_cs, out.stride(-2), out.stride(-1),
        BLOCK_M=cfg["block_m"], BLOCK_N=cfg["block_n"], BLOCK_K=cfg["block_k"], GROUP_M=cfg["group_m"],
        SPLIT_K=split, SCALE_GROUP=scale_group, DECODE=cfg["decode"], TWO_DOT=cfg["unpack"] == "two_dot",
        SWAP_AB=bool(cfg["swap_ab"]), EXPAND_SCALES=bool(cfg["expand_scales"]), SCALES=scales, PTX=a.is_cuda,
        num_stages=cfg["num_stages"], num_warps=cfg["num_warps"],
    )
    if split > 1:
        _split_sum_kernel[(triton.cdiv(m * n, SPLIT_SUM_BLOCK),)](out, c, m * n, SPLIT_K=split,
                                                                  BLOCK=SPLIT_SUM_BLOCK)
    return c


__all__ = ["DECODES", "UNPACKS", "configure", "e2m1_to_bf16", "e2m1_to_f16_unbiased", "fp4_gemm"]
