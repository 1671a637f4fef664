"""MXFP4 format in plain PyTorch: the e2m1 table, an encoder, an explicit decoder and the GEMM.

Format (OCP Microscaling v1.0, as used by this unit's kernels) for a weight ``B [K, N]``:

- values: e2m1 (1 sign, 2 exponent bits with bias 1, 1 mantissa bit), 16 codes listed in
  ``E2M1_VALUES``; two codes per byte along K, **low nibble first**: ``packed[i, n]`` holds
  ``code[2i, n]`` in bits 0-3 and ``code[2i + 1, n]`` in bits 4-7. ``packed`` is uint8 ``[K/2, N]``.
- scales: e8m0, one per 32 consecutive K (``scales`` uint8 ``[K/32, N]``), value ``2^(s - 127)``;
  code 255 (NaN in the spec) is never produced by the encoder.

Decoded ``B[k, n] = E2M1_VALUES[code[k, n]] * 2^(scales[k // 32, n] - 127)``. K must be a
multiple of 32.
"""

from __future__ import annotations

import torch

BLOCK = 32  # K values sharing one e8m0 scale (OCP MX)
E2M1_MAX_EXP = 2  # the largest e2m1 magnitude is 6 = 1.5 * 2^2
# code -> value; bit 3 is the sign, bits 0-2 index the magnitudes 0, 0.5, 1, 1.5, 2, 3, 4, 6.
E2M1_VALUES = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0,
               -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0)
# Midpoints between consecutive magnitudes; a tie rounds to the even code (mantissa bit 0).
_MIDPOINTS = (0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0)


def round_to_e2m1(x: torch.Tensor) -> torch.Tensor:
    """Nearest e2m1 code (uint8 0..15) of each value: ties to even, saturating at +-6."""
    mag = x.abs().double()
    bounds = torch.tensor(_MIDPOINTS, dtype=torch.float64, device=x.device)
    idx = torch.bucketize(mag, bounds)  # mag == bounds[j] -> j (rounds the tie down)
    tie_up = (idx < len(_MIDPOINTS)) & (idx % 2 == 1)
    tie_up &= mag == bounds[idx.clamp(max=len(_MIDPOINTS) - 1)]
    code = idx + tie_up.long()
    return (code + 8 * (x < 0).long()).to(torch.uint8)


def pack_nibbles(codes: torch.Tensor) -> torch.Tensor:
    """uint8 codes ``[K, N]`` -> packed ``[K/2, N]``, row 2i in the low nibble."""
    return codes[0::2] | (codes[1::2] << 4)


def unpack_nibbles(packed: torch.Tensor) -> torch.Tensor:
    """packed ``[K/2, N]`` -> uint8 codes ``[K, N]``."""
    return torch.stack((packed & 0xF, packed >> 4), dim=1).flatten(0, 1)


def quantize_mxfp4(b: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Encode ``b [K, N]`` (any float dtype) as ``(packed uint8 [K/2, N], scales uint8 [K/32, N])``.

    Per 32-block: shared exponent ``floor(log2(amax)) - 2`` (OCP MX: the block's largest value
    lands in e2m1's top binade [4, 8) and saturates at 6), clamped to e8m0's [-127, 127]; values
    divided by ``2^exp`` round to the nearest e2m1. An all-zero block gets exponent -127.
    """
    k, n = b.shape
    if k % BLOCK:
        raise ValueError(f"K={k} must be a multiple of {BLOCK}")
    blocks = b.double().reshape(k // BLOCK, BLOCK, n)
    amax = blocks.abs().amax(dim=1)  # [K/32, N]
    exp = torch.floor(torch.log2(amax.clamp_min(2.0 ** -140))) - E2M1_MAX_EXP
    exp = exp.clamp(-127, 127)
    codes = round_to_e2m1(blocks / torch.exp2(exp)[:, None, :]).reshape(k, n)
    return pack_nibbles(codes), (exp + 127).to(torch.uint8)


def dequantize_mxfp4(packed: torch.Tensor, scales: torch.Tensor) -> torch.Tensor:
    """Explicit decode: float64 ``[K, N]`` from the table and the e8m0 exponents."""
    table = torch.tensor(E2M1_VALUES, dtype=torch.float64, device=packed.device)
    values = table[unpack_nibbles(packed).long()]  # [K, N]
    scale = torch.exp2(scales.double() - 127.0).repeat_interleave(BLOCK, dim=0)  # [K, N]
    return values * scale


def mxfp4_gemm(a: torch.Tensor, b_packed: torch.Tensor, b_scales: torch.Tensor,
               out_dtype: torch.dtype | None = None) -> torch.Tensor:
    """``a @ decode(B)`` computed in float64, returned as ``out_dtype`` (default: bf16 like the
    kernels, float64 for float64 ``a``)."""
    return (a.double() @ dequantize_mxfp4(b_packed, b_scales)).to(_result_dtype(a, out_dtype))


def _result_dtype(first: torch.Tensor, out_dtype: torch.dtype | None) -> torch.dtype:
    """``out_dtype`` if given, else float64 for float64 inputs (the harness's exact reference), else bf16."""
    if out_dtype is not None:
        return out_dtype
    return torch.float64 if first.dtype == torch.float64 else torch.bfloat16
