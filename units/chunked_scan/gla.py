"""Chunked GLA forward: gated linear attention with a decay per key channel (vector gates).

Computes ``S_t = diag(exp(g_t)) S_{t-1} + k_t^T v_t``, ``o_t = q_t S_t`` for q, k, v bfloat16
``[B, H, T, D]`` and log-decays g float32 ``[B, H, T, D]`` (one per token and key channel), i.e.
``o_t = sum_{s <= t} sum_c q_tc k_sc exp(G_tc - G_sc) v_s`` with ``G = cumsum(g)`` along T.

Same walk as ``kernel.py`` (one program per (V-block, batch x head), chunks of 64 tokens, a float32
``[D, BV]`` state in registers), but the decay now differs per key channel, so it cannot multiply
the ``[BT, BT]`` score matrix; it moves into the MMA operands instead. With ``G`` the chunk-local
cumulative log-decay ``[BT, BK]``:

- inter-chunk: ``o = (q * exp(G)) @ S``
- intra-chunk: ``o += (((q * exp(G)) @ (k * exp(-G))^T) [j <= i]) @ v``
- state:       ``S = exp(G_last)[:, None] * S + (k * exp(G_last - G))^T @ v``

``exp(-G)`` grows within a chunk by ``exp(-G_last)``, the decay over one chunk, which must stay
below float32's range (``-G_last < 88`` per channel). FLA lifts this bound with 16-token sub-chunks;
gates such as ``logsigmoid(x) / 16`` (FLA's GLA layer) stay far inside it.

With ``raw_gate=True`` the kernel reads raw gate logits and applies
``logsigmoid(x + bias) / normalizer`` itself, saving a pass over the ``[B, H, T, D]`` gates.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

# Chunk 64 and BV = 64 as kernel.py (256 programs at B=8, H=16, D=128). 8 warps rather than 4: the
# per-channel decays add three [64, 128] float32 tiles to the live registers. Not timed on a GPU yet.
BT, BV = 64, 64
NUM_WARPS, NUM_STAGES = 8, 2


@triton.jit
def _logsigmoid(x):
    return tl.minimum(x, 0.0) - tl.log(1.0 + tl.exp(-tl.abs(x)))


@triton.jit
def _chunk_gla_fwd_kernel(
    q, k, v, g, o, T, D, bias, inv_normalizer,
    RAW_GATE: tl.constexpr, BT: tl.constexpr, BK: tl.constexpr, BV: tl.constexpr,
):
    i_v, i_bh = tl.program_id(0), tl.program_id(1)
    base = i_bh.to(tl.int64) * T * D
    offs_t = tl.arange(0, BT)  # [BT]
    offs_k = tl.arange(0, BK)  # [BK]
    offs_v = i_v * BV + tl.arange(0, BV)  # [BV]
    mask_k, mask_v = offs_k < D, offs_v < D
    causal = offs_t[:, None] >= offs_t[None, :]  # [BT, BT]

    b_S = tl.zeros((BK, BV), dtype=tl.float32)  # state at the chunk start
    for i_t in range(tl.cdiv(T, BT)):
        t = i_t * BT + offs_t  # [BT]
        mask_t = t < T
        mask_tk = mask_t[:, None] & mask_k[None, :]
        p_qk = base + t[:, None] * D + offs_k[None, :]
        b_q = tl.load(q + p_qk, mask=mask_tk, other=0.0)  # [BT, BK]
        b_k = tl.load(k + p_qk, mask=mask_tk, other=0.0)  # [BT, BK]
        b_v = tl.load(v + base + t[:, None] * D + offs_v[None, :],
                      mask=mask_t[:, None] & mask_v[None, :], other=0.0)  # [BT, BV]
        b_g = tl.load(g + p_qk, mask=mask_tk, other=0.0).to(tl.float32)  # [BT, BK]
        if RAW_GATE:
            b_g = tl.where(mask_tk, _logsigmoid(b_g + bias) * inv_normalizer, 0.0)
        b_G = tl.cumsum(b_g, axis=0)  # [BT, BK] chunk-local cumulative log-decay
        b_G_last = tl.sum(b_g, axis=0)  # [BK]; padded g are 0

        b_qg = (b_q * tl.exp(b_G)).to(b_q.dtype)  # [BT, BK]
        b_kg = (b_k * tl.exp(-b_G)).to(b_k.dtype)  # [BT, BK]
        b_o = tl.dot(b_qg, b_S.to(b_q.dtype))  # [BT, BV]
        b_A = tl.where(causal, tl.dot(b_qg, tl.trans(b_kg)), 0.0)  # [BT, BT]
        b_o = tl.dot(b_A.to(b_v.dtype), b_v, b_o)
        tl.store(o + base + t[:, None] * D + offs_v[None, :], b_o.to(o.dtype.element_ty),
                 mask=mask_t[:, None] & mask_v[None, :])

        b_kd = (b_k * tl.exp(b_G_last[None, :] - b_G)).to(b_k.dtype)  # [BT, BK]
        b_S = b_S * tl.exp(b_G_last)[:, None] + tl.dot(tl.trans(b_kd), b_v)  # [BK, BV]


def chunk_gla(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, g: torch.Tensor, raw_gate: bool = False,
              bias: float = 0.0, normalizer: float = 1.0) -> torch.Tensor:
    """GLA forward with per-key-channel decays.

    Args:
        q, k, v: bfloat16 ``[B, H, T, D]``, contiguous (any T; D <= 256).
        g: float32 ``[B, H, T, D]`` log-decays ``<= 0``; with ``raw_gate`` the raw gate logits
            ``x``, turned into ``logsigmoid(x + bias) / normalizer`` inside the kernel.

    Returns:
        bfloat16 ``[B, H, T, D]``: ``o_t = sum_{s <= t} sum_c q_tc k_sc exp(G_tc - G_sc) v_s``.
        No ``D^-0.5`` scale is applied.

    Example::

        q, k, v = (torch.randn(2, 4, 1000, 64, device="cuda", dtype=torch.bfloat16) for _ in range(3))
        x = torch.randn(2, 4, 1000, 64, device="cuda")
        o = chunk_gla(q, k, v, x, raw_gate=True, normalizer=16.0)  # [2, 4, 1000, 64]
    """
    if q.shape != k.shape or q.shape != v.shape or g.shape != q.shape:
        raise ValueError(f"need q, k, v, g [B, H, T, D]; got {tuple(q.shape)}, {tuple(k.shape)}, "
                         f"{tuple(v.shape)}, {tuple(g.shape)}")
    q, k, v, g = q.contiguous(), k.contiguous(), v.contiguous(), g.contiguous()
    b, h, t_len, d = q.shape
    o = torch.empty_like(v)
    bk = max(16, triton.next_power_of_2(d))
    bv = min(BV, bk)
    grid = (triton.cdiv(d, bv), b * h)
    _chunk_gla_fwd_kernel[grid](q, k, v, g, o, t_len, d, float(bias), 1.0 / normalizer, RAW_GATE=raw_gate,
                                BT=BT, BK=bk, BV=bv, num_warps=NUM_WARPS, num_stages=NUM_STAGES)
    return o
