"""Two-pass (gated) delta rule forward: a state walk that stores every chunk's state, then an output
pass parallel over chunks (FLA's ``chunk_gated_delta_rule_fwd_h`` + ``chunk_fwd_o`` split).

Same recurrence and chunked form as ``delta_rule.py`` (read its docstring first); the WY kernels of
``delta_rule_wy.py`` build ``W`` and ``U``. The fused walk of ``delta_rule.py`` runs five MMAs per chunk in
``cdiv(D, BV) * B * H`` programs. Here:

- ``_delta_states_kernel`` (one program per value block and head) walks the chunks with two MMAs
  per chunk: ``N = U - W S`` and ``S = exp(G_last) S + (K * exp(G_last - G))^T N``; it stores the
  state entering every chunk (bf16 ``[B*H, NT, D, D]``) and ``N`` (bf16 ``[B, H, T, D]``).
- ``_delta_output_kernel`` (one program per value block, chunk and head) computes
  ``O = (Q * exp(G)) S + lower(Q K^T * exp(G_i - G_j)) N``.

Both passes round ``S`` and ``N`` to bf16 before their MMAs exactly as the fused walk does, so the
two forms differ only in float32 summation order. The price is the stored states: ``2 * D^2``
bytes per chunk and head written and read back (134 MB each way at B=8, H=16, T=2048, D=128).
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from units.chunked_scan.delta_rule_wy import chunk_rows, gate_log_decay, inv_norm_rows


@triton.jit
def _delta_states_kernel(k, w, u, gate, h, vn, T, D, NT, bias,
                         GATED: tl.constexpr, BT: tl.constexpr, BK: tl.constexpr, BV: tl.constexpr):
    i_v, i_bh = tl.program_id(0), tl.program_id(1)
    base = i_bh.to(tl.int64) * T * D
    base_t = i_bh.to(tl.int64) * T
    base_h = i_bh.to(tl.int64) * NT * D * D
    offs_t = tl.arange(0, BT)  # [BT]
    offs_k = tl.arange(0, BK)  # [BK]
    offs_v = i_v * BV + tl.arange(0, BV)  # [BV]
    mask_k, mask_v = offs_k < D, offs_v < D
    mask_kv = mask_k[:, None] & mask_v[None, :]
    p_h = offs_k[:, None] * D + offs_v[None, :]  # [BK, BV]

    b_S = tl.zeros((BK, BV), dtype=tl.float32)  # state at the chunk start
    for i_t in range(NT):
        t, mask_t, mask_tk, mask_tv, p_k, p_v = chunk_rows(i_t, offs_t, offs_k, offs_v, mask_k, mask_v, base, T, D)
        b_k = tl.load(k + p_k, mask=mask_tk, other=0.0)  # [BT, BK] raw
        b_w = tl.load(w + p_k, mask=mask_tk, other=0.0)  # [BT, BK]
        b_u = tl.load(u + p_v, mask=mask_tv, other=0.0)  # [BT, BV]
        b_Sb = b_S.to(w.dtype.element_ty)
        tl.store(h + base_h + i_t * D * D + p_h, b_Sb, mask=mask_kv)
        b_N = b_u.to(tl.float32) - tl.dot(b_w, b_Sb)  # [BT, BV] new values
        tl.store(vn + p_v, b_N.to(vn.dtype.element_ty), mask=mask_tv)
        b_rk = inv_norm_rows(b_k)  # [BT]
        if GATED:
            b_g = gate_log_decay(gate, base_t, t, mask_t, bias)  # [BT]; padded g are 0
            b_G_last = tl.sum(b_g, axis=0)
            b_kscale = b_rk * tl.exp(b_G_last - tl.cumsum(b_g, axis=0))  # [BT]
            b_S = b_S * tl.exp(b_G_last)
        else:
            b_kscale = b_rk
        b_Nk = (b_N * b_kscale[:, None]).to(w.dtype.element_ty)  # [BT, BV]
        b_S = tl.dot(tl.trans(b_k), b_Nk, b_S)  # [BK, BV]


@triton.jit
def _delta_output_kernel(q, k, h, vn, gate, o, T, D, NT, bias,
                         GATED: tl.constexpr, BT: tl.constexpr, BK: tl.constexpr, BV: tl.constexpr):
    i_v, i_t, i_bh = tl.program_id(0), tl.program_id(1), tl.program_id(2)
    base = i_bh.to(tl.int64) * T * D
    base_t = i_bh.to(tl.int64) * T
    offs_t = tl.arange(0, BT)
    offs_k = tl.arange(0, BK)
    offs_v = i_v * BV + tl.arange(0, BV)
    mask_k, mask_v = offs_k < D, offs_v < D
    t, mask_t, mask_tk, mask_tv, p_k, p_v = chunk_rows(i_t, offs_t, offs_k, offs_v, mask_k, mask_v, base, T, D)
    b_q = tl.load(q + p_k, mask=mask_tk, other=0.0)  # [BT, BK] raw
    b_k = tl.load(k + p_k, mask=mask_tk, other=0.0)  # [BT, BK] raw
    p_h = i_bh.to(tl.int64) * NT * D * D + i_t * D * D + offs_k[:, None] * D + offs_v[None, :]
    b_S = tl.load(h + p_h, mask=mask_k[:, None] & mask_v[None, :], other=0.0)  # [BK, BV] bf16
    b_N = tl.load(vn + p_v, mask=mask_tv, other=0.0)  # [BT, BV] bf16
    b_rq, b_rk = inv_norm_rows(b_q), inv_norm_rows(b_k)
    causal = offs_t[:, None] >= offs_t[None, :]
    b_A = tl.dot(b_q, tl.trans(b_k)) * b_rq[:, None] * b_rk[None, :]  # [BT, BT]
    if GATED:
        b_G = tl.cumsum(gate_log_decay(gate, base_t, t, mask_t, bias), axis=0)  # [BT]
        b_A = tl.where(causal, b_A * tl.exp(tl.where(causal, b_G[:, None] - b_G[None, :], 0.0)), 0.0)
        b_o = tl.dot(b_q, b_S) * (b_rq * tl.exp(b_G))[:, None]
    else:
        b_A = tl.where(causal, b_A, 0.0)
        b_o = tl.dot(b_q, b_S) * b_rq[:, None]
    b_o = tl.dot(b_A.to(b_N.dtype), b_N, b_o)  # [BT, BV]
    tl.store(o + p_v, b_o.to(o.dtype.element_ty), mask=mask_tv)


def delta_two_pass(q: torch.Tensor, k: torch.Tensor, w: torch.Tensor, u: torch.Tensor, gate: torch.Tensor,
                   gated: bool, gate_bias: float, *, block_t: int, block_v: int, num_warps: int,
                   num_stages: int, out_block_v: int, out_warps: int) -> torch.Tensor:
    """Output of the chunk walk from the WY factors, in two passes.

    Args:
        q, k: bfloat16 ``[B, H, T, D]``, contiguous, raw (normalised in the kernels).
        w, u: bfloat16 ``[B, H, T, D]``: ``delta_rule._wy_fwd_kernel``'s W and U.
        gate: float32 ``[B, H, T]`` raw gate logits (any tensor of that shape when not ``gated``).
        block_t: the chunk length (the WY kernel's, 64). block_v: value columns per state program.
        num_warps, num_stages: the state walk's; out_block_v, out_warps: the output kernel's value
            columns per program and warps.

    Returns:
        bfloat16 ``[B, H, T, D]``.
    """
    b, h_, t_len, d = q.shape
    bk = max(16, triton.next_power_of_2(d))
    bv = min(block_v, bk)
    nt = triton.cdiv(t_len, block_t)
    states = torch.empty(b * h_, nt, d, d, device=q.device, dtype=w.dtype)
    vn = torch.empty_like(u)
    _delta_states_kernel[(triton.cdiv(d, bv), b * h_)](
        k, w, u, gate, states, vn, t_len, d, nt, float(gate_bias), GATED=gated, BT=block_t, BK=bk, BV=bv,
        num_warps=num_warps, num_stages=num_stages,
    )
    o = torch.empty_like(u)
    obv = min(out_block_v, bk)
    _delta_output_kernel[(triton.cdiv(d, obv), nt, b * h_)](
        q, k, states, vn, gate, o, t_len, d, nt, float(gate_bias), GATED=gated, BT=block_t, BK=bk, BV=obv,
        num_warps=out_warps,
    )
    return o
