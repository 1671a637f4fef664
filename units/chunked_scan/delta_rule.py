"""Chunked (gated) delta rule forward: DeltaNet and Gated DeltaNet with the WY representation.

Per (batch, head), with q and k L2-normalised along D, ``beta_t = sigmoid(b_t)`` and optional
log-decays ``g_t <= 0`` (``exp(g) = 1`` for plain DeltaNet)::

    S_t = exp(g_t) (I - beta_t k_t^T k_t) S_{t-1} + beta_t k_t^T v_t        # [D, D] float32
    o_t = q_t S_t

Chunked form (chunks of ``BT = 64``, ``G`` the chunk-local cumulative log-decay, ``S`` the state at
the chunk start, rows are tokens):

    A = strictly_lower(diag(beta) (K K^T * exp(G_i - G_j)))      [BT, BT]
    T = (I + A)^-1 diag(beta),  W = T (K * exp(G)),  U = T V      (WY representation)
    N = U - W S                                                  new values, [BT, D]
    O = (Q * exp(G)) S + lower(Q K^T * exp(G_i - G_j)) N
    S = exp(G_last) S + (K * exp(G_last - G))^T N

The WY factors come from ``delta_rule_wy.py`` (two kernels parallel over chunks).
``_delta_fwd_kernel`` (one program per 64 value columns and head) walks the chunks with the
float32 state in registers: five bf16 MMAs per chunk.

W and U are stored in bfloat16 (like FLA); q and k are normalised on load in every kernel.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from units.chunked_scan.delta_rule_two_pass import delta_two_pass
from units.chunked_scan.delta_rule_wy import (
    BT,
    WY_APPLY_WARPS,
    WY_INVERSE_WARPS,
    chunk_rows,
    gate_log_decay,
    inv_norm_rows,
    wy_factors,
)

# BV = 64 gives B*H*D/64 = 256 state programs at B=8, H=16, D=128 on 132 SMs; on the H200 at that
# shape (bench/results/sweep-delta-rule/delta-rule-sweep-h200-2026-12-03.jsonl) the walk at 64 columns, 4 warps and
# 2 stages was the fastest of the swept walks.
BV = 64
NUM_WARPS, NUM_STAGES = 4, 2


@triton.jit
def _delta_fwd_kernel(q, k, w, u, gate, o, T, D, bias,
                      GATED: tl.constexpr, BT: tl.constexpr, BK: tl.constexpr, BV: tl.constexpr):
    i_v, i_bh = tl.program_id(0), tl.program_id(1)
    base = i_bh.to(tl.int64) * T * D
    base_t = i_bh.to(tl.int64) * T
    offs_t = tl.arange(0, BT)  # [BT]
    offs_k = tl.arange(0, BK)  # [BK]
    offs_v = i_v * BV + tl.arange(0, BV)  # [BV]
    mask_k, mask_v = offs_k < D, offs_v < D
    causal = offs_t[:, None] >= offs_t[None, :]  # [BT, BT]

    b_S = tl.zeros((BK, BV), dtype=tl.float32)  # state at the chunk start
    for i_t in range(tl.cdiv(T, BT)):
        t, mask_t, mask_tk, mask_tv, p_k, p_v = chunk_rows(i_t, offs_t, offs_k, offs_v, mask_k, mask_v, base, T, D)
        b_q = tl.load(q + p_k, mask=mask_tk, other=0.0)  # [BT, BK] raw
        b_k = tl.load(k + p_k, mask=mask_tk, other=0.0)  # [BT, BK] raw
        b_rq, b_rk = inv_norm_rows(b_q), inv_norm_rows(b_k)  # [BT]
        b_w = tl.load(w + p_k, mask=mask_tk, other=0.0)  # [BT, BK]
        b_u = tl.load(u + p_v, mask=mask_tv, other=0.0)  # [BT, BV]
        b_Sb = b_S.to(w.dtype.element_ty)

        b_N = b_u.to(tl.float32) - tl.dot(b_w, b_Sb)  # [BT, BV] new values
        b_Nb = b_N.to(w.dtype.element_ty)
        b_A = tl.dot(b_q, tl.trans(b_k)) * b_rq[:, None] * b_rk[None, :]  # [BT, BT] normalised q k^T
        if GATED:
            b_g = gate_log_decay(gate, base_t, t, mask_t, bias)  # [BT]; padded g are 0
            b_G = tl.cumsum(b_g, axis=0)  # [BT] chunk-local cumulative log-decay
            b_G_last = tl.sum(b_g, axis=0)
            b_A = tl.where(causal, b_A * tl.exp(tl.where(causal, b_G[:, None] - b_G[None, :], 0.0)), 0.0)
            b_o = tl.dot(b_q, b_Sb) * (b_rq * tl.exp(b_G))[:, None]
            b_kscale = b_rk * tl.exp(b_G_last - b_G)  # [BT]
            b_S = b_S * tl.exp(b_G_last)
        else:
            b_A = tl.where(causal, b_A, 0.0)
            b_o = tl.dot(b_q, b_Sb) * b_rq[:, None]
            b_kscale = b_rk
        b_o = tl.dot(b_A.to(w.dtype.element_ty), b_Nb, b_o)  # [BT, BV]
        tl.store(o + p_v, b_o.to(o.dtype.element_ty), mask=mask_tv)
        b_Nk = (b_N * b_kscale[:, None]).to(w.dtype.element_ty)  # [BT, BV] key norms and decays on N
        b_S = tl.dot(tl.trans(b_k), b_Nk, b_S)  # [BK, BV]

def chunk_delta_rule(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, beta: torch.Tensor,
                     gate: torch.Tensor | None = None, gate_bias: float = 0.0, *, block_v: int = BV,
                     num_warps: int = NUM_WARPS, num_stages: int = NUM_STAGES,
                     wy_warps: int = WY_INVERSE_WARPS, two_pass: bool = False, out_block_v: int = BV,
                     out_warps: int = NUM_WARPS, apply_warps: int = WY_APPLY_WARPS) -> torch.Tensor:
    """DeltaNet (``gate is None``) or Gated DeltaNet forward with in-kernel q/k L2 norm and sigmoid.

    Args:
        q, k, v: bfloat16 ``[B, H, T, D]``, contiguous (any T; D <= 256). q and k are
            L2-normalised along D inside the kernels.
        beta: float32 ``[B, H, T]`` raw logits; the writing strength is ``sigmoid(beta)``.
        gate: float32 ``[B, H, T]`` raw gate logits or None; the log-decay is
            ``logsigmoid(gate + gate_bias)``.
        block_v, num_warps, num_stages: value columns per program, warps and pipeline stages of the
            chunk walk; wy_warps, apply_warps: the warps of the WY inverse and of the kernel
            applying it (``delta_rule_wy.wy_factors``).
        two_pass: walk the chunks with two MMAs each and compute the output in a second pass
            parallel over chunks (``delta_rule_two_pass.py``; ``out_block_v`` and ``out_warps`` are
            its output kernel's), instead of the fused five-MMA walk.

    Returns:
        bfloat16 ``[B, H, T, D]``: ``o_t = q_t S_t`` of the recurrence in the module docstring
        (no ``D^-0.5`` scale).

    Example::

        q, k, v = (torch.randn(2, 4, 1000, 64, device="cuda", dtype=torch.bfloat16) for _ in range(3))
        beta, gate = torch.randn(2, 4, 1000, device="cuda"), torch.randn(2, 4, 1000, device="cuda")
        o = chunk_delta_rule(q, k, v, beta, gate, gate_bias=4.0)  # [2, 4, 1000, 64]
    """
    if q.shape != k.shape or q.shape != v.shape or beta.shape != q.shape[:3]:
        raise ValueError(f"need q, k, v [B, H, T, D] and beta [B, H, T]; got {tuple(q.shape)}, "
                         f"{tuple(k.shape)}, {tuple(v.shape)}, {tuple(beta.shape)}")
    if gate is not None and gate.shape != beta.shape:
        raise ValueError(f"gate must be [B, H, T] like beta; got {tuple(gate.shape)}")
    q, k, v, beta = q.contiguous(), k.contiguous(), v.contiguous(), beta.contiguous()
    gated = gate is not None
    gate = gate.contiguous() if gated else beta
    w, u = wy_factors(k, v, beta, gate, gated, gate_bias, num_warps=wy_warps, apply_warps=apply_warps)
    if two_pass:
        return delta_two_pass(q, k, w, u, gate, gated, gate_bias, block_t=BT, block_v=block_v,
                              num_warps=num_warps, num_stages=num_stages, out_block_v=out_block_v,
                              out_warps=out_warps)
    o = torch.empty_like(v)
    b, h, t_len, d = q.shape
    bk = max(16, triton.next_power_of_2(d))
    bv = min(block_v, bk)
    _delta_fwd_kernel[(triton.cdiv(d, bv), b * h)](
        q, k, w, u, gate, o, t_len, d, float(gate_bias), GATED=gated, BT=BT, BK=bk, BV=bv,
        num_warps=num_warps, num_stages=num_stages,
    )
    return o
