"""MXFP4 block-scaled GEMM on Hopper: ``out = a @ decode(B)``, B's e2m1 codes decoded in registers.

``a`` is bfloat16 ``[M, K]``; ``B [K, N]`` arrives in MXFP4 (see ``reference.py``): packed uint8
``[K/2, N]`` (two e2m1 codes per byte along K, low nibble first) and e8m0 scales uint8
``[K/32, N]`` (value ``2^(s - 127)``). Hopper has no FP4 tensor cores, so each K step loads the
packed tile (a quarter of bf16's bytes), turns every nibble into bf16 bits with integer ops,
multiplies by its block's power-of-two scale (exact), interleaves the even and odd K rows back
into a ``[BLOCK_K, BLOCK_N]`` tile and feeds a bf16 ``tl.dot`` with a float32 accumulator. The
decoded weight never exists in global memory. The Triton kernel is ``units/block_scaled_fp4.py``'s,
shared with ``nvfp4_gemm`` (the formats differ only in how a scale decodes); this module holds the
MXFP4 configuration and the checked entry point.

e2m1 -> bf16 bits: magnitude bits ``x = e1 e0 m``; for ``x >= 2`` (normal) the bf16 pattern is
``(x << 6) + (126 << 7)`` (exponent ``e + 126`` = rebias 1 -> 127, mantissa bit ``m`` at bit 6);
``x == 1`` is the subnormal 0.5 (``0x3F00``); ``x == 0`` is zero; the sign bit moves from bit 3 to
bit 15. The e8m0 scale ``s`` as bf16 is the bit pattern ``s << 7`` (exact for 1 <= s <= 254).

Variants, chosen by keywords of ``mxfp4_gemm`` (the README says what each changes):
``decode`` ("select": the integer decode above; "bits": fp16 bit placement and one multiply;
"dot_scaled": Triton's ``tl.dot_scaled``), ``unpack`` ("join": interleave the two nibble planes
into one tile; "two_dot": one dot per plane against A's even and odd K columns), ``swap_ab``
(compute ``out^T = B^T a^T``, the decoded weight being the MMA's register operand), ``split_k`` and
``expand_scales``.
"""

from __future__ import annotations

import torch

from units.block_scaled_fp4 import configure, fp4_gemm

# Tiles and variants by M, from H200 measurements at N=K=8192 (median of 30 timed calls).
# M=32 (decode-sized, <= SMALL_M): the PTX table-lookup decode ("lut", units/fp4_ptx.py) with its two
# planes and one scale per packed code, split-K 4, 32x128x128 tiles in 3 stages with 4 warps: 0.0406
# ms against 0.0425 for cuBLAS on the bf16 weight, 0.0594 for the "bits" decode this replaced and
# 0.152 for the naive decode-then-GEMM (bench/results/sweep-fp4-lut/fp4-sweep-lut-h200-2026-12-03.jsonl); 64-row
# tiles ran 0.0424-0.0464 ms, split-K 2 and 8 0.0465-0.051 ms.
# M=256: 256x64x128 in 3 stages with 8 warps and one scale per packed code (wide, pipelined scale
# loads): 0.207 ms against 0.193 naive (bench/results/sweep-fp4/fp4-sweep-h200-2026-11-30.jsonl); the margin
# is not expected there.
SMALL_M = 64
# The select decode, interleaved planes, no swap and no split: the variant keywords' defaults, which
# the tile sets below override.
BASE_VARIANT = {"decode": "select", "unpack": "join", "swap_ab": False, "split_k": 1, "expand_scales": False}
LARGE_M_TILES = {"block_m": 256, "block_n": 64, "block_k": 128, "group_m": 8, "num_stages": 3, "num_warps": 8,
                 **BASE_VARIANT, "expand_scales": True}
SMALL_M_TILES = {"block_m": 32, "block_n": 128, "block_k": 128, "group_m": 1, "num_stages": 3, "num_warps": 4,
                 **BASE_VARIANT, "decode": "lut", "unpack": "two_dot", "expand_scales": True, "split_k": 4}


def tiles_for(m: int) -> dict:
    """This unit's configuration for ``m`` activation rows (keywords of ``mxfp4_gemm``)."""
    return dict(SMALL_M_TILES if m <= SMALL_M else LARGE_M_TILES)


SCALE_GROUP = 32  # K values per e8m0 scale


def mxfp4_gemm(
    a: torch.Tensor, b_packed: torch.Tensor, b_scales: torch.Tensor, *, block_m: int | None = None,
    block_n: int | None = None, block_k: int | None = None, group_m: int | None = None,
    num_stages: int | None = None, num_warps: int | None = None, decode: str | None = None,
    unpack: str | None = None, swap_ab: bool | None = None, split_k: int | None = None,
    expand_scales: bool | None = None,
) -> torch.Tensor:
    """``a @ B`` with ``B`` given in MXFP4.

    Args:
        a: bfloat16 ``[M, K]``, any strides; K a multiple of 32.
        b_packed: uint8 ``[K/2, N]``, two e2m1 codes per byte along K (low nibble = even row).
        b_scales: uint8 ``[K/32, N]``, e8m0 exponents (``2^(s - 127)``).
        block_m, block_n, block_k, group_m, num_stages, num_warps: the tile configuration;
            ``block_k`` is a power of two >= 32 (whole scale groups).
        decode: "select" (integer decode with compares), "bits" (fp16 bit placement, one multiply;
            e8m0 codes up to 240), or "dot_scaled" (``tl.dot_scaled``; ``unpack`` does not apply).
        unpack: "join" (interleave both nibble planes into one tile, one dot) or "two_dot" (one dot
            per plane against A's even and odd K columns).
        swap_ab: compute ``out^T = B^T a^T``: the weight tile is the dot's left operand, so the MMA
            takes it from registers and M (possibly 16 or 32) becomes the MMA's N.
        split_k: K split over this many programs per output tile; float32 partials are summed by a
            second kernel.
        expand_scales: load one scale per packed code (``[BK/2, BN]``, each scale 16 times) instead
            of ``[BK/32, BN]`` broadcast in registers: a load wide enough for cp.async pipelining.
        ``tiles_for(M)`` fills any keyword left out.

    Returns:
        bfloat16 ``[M, N]``, contiguous.

    Example::

        from units.mxfp4_gemm.reference import quantize_mxfp4
        w = torch.randn(4096, 1024, device="cuda")
        packed, scales = quantize_mxfp4(w)            # [2048, 1024], [128, 1024]
        x = torch.randn(16, 4096, device="cuda", dtype=torch.bfloat16)
        y = mxfp4_gemm(x, packed, scales)             # [16, 1024] bf16
        y = mxfp4_gemm(x, packed, scales, decode="bits", swap_ab=True, block_m=16, split_k=4)
    """
    m, k = a.shape
    n = b_packed.shape[1]
    if a.dtype != torch.bfloat16 or b_packed.dtype != torch.uint8 or b_scales.dtype != torch.uint8:
        raise TypeError(f"need bf16 a and uint8 b_packed/b_scales, got {a.dtype}, {b_packed.dtype}, "
                        f"{b_scales.dtype}")
    if k % SCALE_GROUP or tuple(b_packed.shape) != (k // 2, n) or tuple(b_scales.shape) != (k // SCALE_GROUP, n):
        raise ValueError(f"K={k} must be a multiple of {SCALE_GROUP} with b_packed [K/2, N] and b_scales "
                         f"[K/32, N]; got {tuple(b_packed.shape)} and {tuple(b_scales.shape)}")
    given = {"block_m": block_m, "block_n": block_n, "block_k": block_k, "group_m": group_m,
             "num_stages": num_stages, "num_warps": num_warps, "decode": decode, "unpack": unpack,
             "swap_ab": swap_ab, "split_k": split_k, "expand_scales": expand_scales}
    cfg = configure(tiles_for(m), given, "e8m0", SCALE_GROUP)
    return fp4_gemm(a, b_packed, b_scales, None, cfg, "e8m0", SCALE_GROUP)

