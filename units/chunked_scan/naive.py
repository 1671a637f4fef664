"""Naive ``chunked_scan``: the token-by-token recurrence in one Triton kernel.

One program per (V-block, batch x head) keeps ``S [D, BV]`` in float32 registers and walks all T
tokens: ``S = exp(g_t) * S + k_t^T v_t`` (a rank-1 update) then ``o_t = q_t S`` (a reduction over
D). Same bytes as the chunked kernel, but T dependent steps of vector work with no tensor cores.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

BV = 32
NUM_WARPS = 4


@triton.jit
def _recurrent_simple_gla_fwd_kernel(q, k, v, g, o, T, D, BK: tl.constexpr, BV: tl.constexpr):
    i_v, i_bh = tl.program_id(0), tl.program_id(1)
    base = i_bh.to(tl.int64) * T * D
    offs_k = tl.arange(0, BK)  # [BK]
    offs_v = i_v * BV + tl.arange(0, BV)  # [BV]
    mask_k, mask_v = offs_k < D, offs_v < D
    b_S = tl.zeros((BK, BV), dtype=tl.float32)
    for t in range(T):
        b_q = tl.load(q + base + t * D + offs_k, mask=mask_k, other=0.0).to(tl.float32)  # [BK]
        b_k = tl.load(k + base + t * D + offs_k, mask=mask_k, other=0.0).to(tl.float32)  # [BK]
        b_v = tl.load(v + base + t * D + offs_v, mask=mask_v, other=0.0).to(tl.float32)  # [BV]
        b_g = tl.load(g + i_bh.to(tl.int64) * T + t)
        b_S = b_S * tl.exp(b_g) + b_k[:, None] * b_v[None, :]  # [BK, BV]
        b_o = tl.sum(b_q[:, None] * b_S, axis=0)  # [BV]
        tl.store(o + base + t * D + offs_v, b_o.to(o.dtype.element_ty), mask=mask_v)


def chunk_simple_gla(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, g: torch.Tensor) -> torch.Tensor:
    """Same contract as ``kernel.chunk_simple_gla``; sequential over tokens."""
    q, k, v, g = q.contiguous(), k.contiguous(), v.contiguous(), g.float().contiguous()
    b, h, t_len, d = q.shape
    o = torch.empty_like(v)
    bk = max(16, triton.next_power_of_2(d))
    bv = min(BV, bk)
    _recurrent_simple_gla_fwd_kernel[(triton.cdiv(d, bv), b * h)](q, k, v, g, o, t_len, d, BK=bk, BV=bv,
                                                                  num_warps=NUM_WARPS)
    return o
