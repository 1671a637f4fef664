"""NVFP4 format in plain PyTorch: encoder, explicit decoder and the GEMM.

Format (NVIDIA NVFP4, as used by this unit's kernels) for a weight ``B [K, N]``:

- values: e2m1 codes (table ``E2M1_VALUES``: 0, 0.5, 1, 1.5, 2, 3, 4, 6 and negatives), two per
  byte along K, **low nibble first** (``packed[i, n]`` = ``code[2i, n] | code[2i + 1, n] << 4``),
  uint8 ``[K/2, N]``;
- block scales: float8_e4m3fn, one per 16 consecutive K, ``[K/16, N]``;
- tensor scale: one float32 for the whole tensor.

Decoded ``B[k, n] = E2M1_VALUES[code[k, n]] * float(scales[k // 16, n]) * tensor_scale``. K must be
a multiple of 16.
"""

from __future__ import annotations

import torch

BLOCK = 16  # K values sharing one e4m3 scale
E2M1_MAX = 6.0
E4M3_MAX = 448.0
E2M1_VALUES = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0,
               -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0)
_MIDPOINTS = (0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0)  # ties round to the even code


def round_to_e2m1(x: torch.Tensor) -> torch.Tensor:
    """Nearest e2m1 code (uint8 0..15) of each value: ties to even, saturating at +-6."""
    mag = x.abs().double()
    bounds = torch.tensor(_MIDPOINTS, dtype=torch.float64, device=x.device)
    idx = torch.bucketize(mag, bounds)
    tie_up = (idx < len(_MIDPOINTS)) & (idx % 2 == 1)
    tie_up &= mag == bounds[idx.clamp(max=len(_MIDPOINTS) - 1)]
    return (idx + tie_up.long() + 8 * (x < 0).long()).to(torch.uint8)


def pack_nibbles(codes: torch.Tensor) -> torch.Tensor:
    """uint8 codes ``[K, N]`` -> packed ``[K/2, N]``, row 2i in the low nibble."""
    return codes[0::2] | (codes[1::2] << 4)


def unpack_nibbles(packed: torch.Tensor) -> torch.Tensor:
    """packed ``[K/2, N]`` -> uint8 codes ``[K, N]``."""
    return torch.stack((packed & 0xF, packed >> 4), dim=1).flatten(0, 1)


def quantize_nvfp4(b: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Encode ``b [K, N]`` as ``(packed uint8 [K/2, N], scales e4m3 [K/16, N], tensor_scale fp32 [1])``.

    ``tensor_scale = amax(|b|) / (6 * 448)`` so every block scale ``amax_block / 6 / tensor_scale``
    fits e4m3 (rounded to nearest by the cast); values divided by ``scale * tensor_scale`` round to
    the nearest e2m1, saturating at 6. All-zero blocks (scale 0) encode as zeros.
    """
    k, n = b.shape
    if k % BLOCK:
        raise ValueError(f"K={k} must be a multiple of {BLOCK}")
    amax = b.double().abs().amax()
    tensor_scale = (amax / (E2M1_MAX * E4M3_MAX)).float().clamp_min(torch.finfo(torch.float32).tiny)
    blocks = b.double().reshape(k // BLOCK, BLOCK, n)
    block_amax = blocks.abs().amax(dim=1)  # [K/16, N]
    scales = (block_amax / E2M1_MAX / tensor_scale.double()).clamp(max=E4M3_MAX).to(torch.float8_e4m3fn)
    denom = (scales.double() * tensor_scale.double())[:, None, :]
    q = torch.where(denom > 0, blocks / denom.clamp_min(1e-300), torch.zeros_like(blocks))
    codes = round_to_e2m1(q).reshape(k, n)
    return pack_nibbles(codes), scales, tensor_scale.reshape(1)


def dequantize_nvfp4(packed: torch.Tensor, scales: torch.Tensor, tensor_scale: torch.Tensor) -> torch.Tensor:
    """Explicit decode: float64 ``[K, N]`` from the table, the e4m3 block scales and the tensor scale."""
    table = torch.tensor(E2M1_VALUES, dtype=torch.float64, device=packed.device)
    values = table[unpack_nibbles(packed).long()]  # [K, N]
    scale = scales.double().repeat_interleave(BLOCK, dim=0)  # [K, N]
    return values * scale * tensor_scale.double().reshape(())


def nvfp4_gemm(a: torch.Tensor, b_packed: torch.Tensor, b_scales: torch.Tensor, b_tensor_scale: torch.Tensor,
               out_dtype: torch.dtype | None = None) -> torch.Tensor:
    """``a @ decode(B)`` computed in float64, returned as ``out_dtype`` (default: bf16 like the
    kernels, float64 for float64 ``a``)."""
    return (a.double() @ dequantize_nvfp4(b_packed, b_scales, b_tensor_scale)).to(_result_dtype(a, out_dtype))


def _result_dtype(first: torch.Tensor, out_dtype: torch.dtype | None) -> torch.dtype:
    """``out_dtype`` if given, else float64 for float64 inputs (the harness's exact reference), else bf16."""
    if out_dtype is not None:
        return out_dtype
    return torch.float64 if first.dtype == torch.float64 else torch.bfloat16
