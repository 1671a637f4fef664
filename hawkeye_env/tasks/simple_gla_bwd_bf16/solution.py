"""Expert Triton solution for ``simple_gla_bwd_bf16``: two chunked walks over each head, built on
the ``chunked_scan`` unit's chunk helpers.

With ``G`` the chunk-local cumulative log-decay (``units.chunked_scan.kernel.load_chunk_decay``,
every exponent below is ``<= 0``), ``M`` the causal mask and ``C = exp(G_i - G_j) [j <= i]``:

1. ``_dq_kernel`` walks the chunks forward, carrying the forward's state
   ``S = sum_s exp(G_end - G_s) k_s^T v_s`` (float32 ``[D, D]``, ``next_state``):
   ``dq = (dO S^T) * exp(G) + ((dO v^T) * C) k``; it also stores ``q . dq`` per token (float32).
2. ``_dkdv_kernel`` walks the chunks backward, carrying the state's gradient
   ``dH = sum_{t later} exp(G_t - G_end) q_t^T dO_t`` (float32 ``[D, D]``):
   ``dv = ((q k^T) * C)^T dO + (k dH) * exp(G_last - G)``,
   ``dk = ((dO v^T) * C)^T q + (v dH^T) * exp(G_last - G)``,
   ``dH <- exp(G_last) dH + (q * exp(G))^T dO``. The log-decay's gradient is
   ``dG_t = q_t . dq_t - k_t . dk_t`` summed over every token from t on: the walk's direction, so a
   float32 carry of the later chunks' sum and a suffix sum inside the chunk give it, and the chain
   rule through ``logsigmoid`` gives ``dgate = dg * sigmoid(-(gate + 4))``.

One program per head holds a whole ``[D, D]`` state (no reduction across programs, no atomics).
MMA operands are bfloat16, accumulation and every decay float32. The log-decay comes from the unit's
``log_decay`` kernel, as in the forward's expert.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl
from torch import nn

from units.chunked_scan.kernel import BT, load_chunk, load_chunk_decay, log_decay, next_state

GATE_BIAS = 4.0  # the task's logsigmoid offset (hawkeye_env/tasks/simple_gla_bwd_bf16/task.py)


@triton.jit
def _dq_kernel(q, k, v, do, g, dq, qdq, T, D, BT: tl.constexpr, BD: tl.constexpr):
    i_bh = tl.program_id(0)
    base = i_bh.to(tl.int64) * T * D
    offs = tl.arange(0, BD)
    mask_d = offs < D
    causal = tl.arange(0, BT)[:, None] >= tl.arange(0, BT)[None, :]  # [BT, BT]
    b_S = tl.zeros([BD, BD], dtype=tl.float32)  # forward state [K, V]
    for start in range(0, T, BT):
        t = start + tl.arange(0, BT)
        mask_t = t < T
        b_q = load_chunk(q, base, t, mask_t, offs, mask_d, D)  # [BT, BD]
        b_k = load_chunk(k, base, t, mask_t, offs, mask_d, D)
        b_v = load_chunk(v, base, t, mask_t, offs, mask_d, D)
        b_do = load_chunk(do, base, t, mask_t, offs, mask_d, D)
        b_g, b_G = load_chunk_decay(g, i_bh, t, mask_t, T)  # [BT]
        b_dq = tl.dot(b_do, tl.trans(b_S).to(b_do.dtype)) * tl.exp(b_G)[:, None]  # [BT, BD]
        b_ds = tl.dot(b_do, tl.trans(b_v)) * tl.exp(tl.where(causal, b_G[:, None] - b_G[None, :], float("-inf")))
        b_dq = tl.dot(b_ds.to(b_k.dtype), b_k, b_dq)
        tl.store(dq + base + t[:, None] * D + offs[None, :], b_dq.to(dq.dtype.element_ty),
                 mask=mask_t[:, None] & mask_d[None, :])
        tl.store(qdq + i_bh.to(tl.int64) * T + t, tl.sum(b_dq * b_q.to(tl.float32), axis=1), mask=mask_t)
        b_S = next_state(b_k, b_v, b_G, tl.sum(b_g, axis=0), b_S)


@triton.jit
def _dkdv_kernel(q, k, v, do, g, gate, qdq, dk, dv, dgate, T, D, gate_bias, BT: tl.constexpr, BD: tl.constexpr):
    i_bh = tl.program_id(0)
    base = i_bh.to(tl.int64) * T * D
    offs = tl.arange(0, BD)
    mask_d = offs < D
    causal = tl.arange(0, BT)[:, None] >= tl.arange(0, BT)[None, :]  # [BT, BT], query i >= key j
    b_dH = tl.zeros([BD, BD], dtype=tl.float32)  # state gradient [K, V]
    b_later = tl.zeros([1], dtype=tl.float32)  # sum of dG over the chunks already walked
    n_chunks = tl.cdiv(T, BT)
    for i in range(0, n_chunks):
        t = (n_chunks - 1 - i) * BT + tl.arange(0, BT)
        mask_t = t < T
        b_q = load_chunk(q, base, t, mask_t, offs, mask_d, D)  # [BT, BD]
        b_k = load_chunk(k, base, t, mask_t, offs, mask_d, D)
        b_v = load_chunk(v, base, t, mask_t, offs, mask_d, D)
        b_do = load_chunk(do, base, t, mask_t, offs, mask_d, D)
        b_g, b_G = load_chunk_decay(g, i_bh, t, mask_t, T)  # [BT]
        b_G_last = tl.sum(b_g, axis=0)
        b_decay = tl.exp(tl.where(causal, b_G[:, None] - b_G[None, :], float("-inf")))  # [BT, BT]
        b_tail = tl.exp(b_G_last - b_G)[:, None]  # [BT, 1]
        b_a = (tl.dot(b_q, tl.trans(b_k)) * b_decay).to(b_do.dtype)  # [BT, BT]
        b_dv = tl.dot(tl.trans(b_a), b_do) + tl.dot(b_k, b_dH.to(b_k.dtype)) * b_tail  # [BT, BD]
        b_ds = (tl.dot(b_do, tl.trans(b_v)) * b_decay).to(b_q.dtype)
        b_dk = tl.dot(tl.trans(b_ds), b_q) + tl.dot(b_v, tl.trans(b_dH).to(b_v.dtype)) * b_tail
        out = base + t[:, None] * D + offs[None, :]
        tl.store(dk + out, b_dk.to(dk.dtype.element_ty), mask=mask_t[:, None] & mask_d[None, :])
        tl.store(dv + out, b_dv.to(dv.dtype.element_ty), mask=mask_t[:, None] & mask_d[None, :])
        row = i_bh.to(tl.int64) * T + t
        b_dG = tl.load(qdq + row, mask=mask_t, other=0.0) - tl.sum(b_dk * b_k.to(tl.float32), axis=1)  # [BT]
        b_dg = tl.sum(b_dG, axis=0) - tl.cumsum(b_dG, axis=0) + b_dG + b_later  # sum over tokens >= t
        b_y = tl.load(gate + row, mask=mask_t, other=0.0) + gate_bias
        tl.store(dgate + row, b_dg / (1.0 + tl.exp(b_y)), mask=mask_t)  # sigmoid(-y) = 1 / (1 + e^y)
        b_later += tl.sum(b_dG, axis=0)
        b_qg = (b_q * tl.exp(b_G)[:, None]).to(b_do.dtype)
        b_dH = b_dH * tl.exp(b_G_last) + tl.dot(tl.trans(b_qg), b_do)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, k, v, gate, grad_out):
        b, h, t_len, d = q.shape
        q, k, v, grad_out, gate = (x.contiguous() for x in (q, k, v, grad_out, gate))
        g = log_decay(gate, GATE_BIAS)  # float32 [B, H, T]
        bd = max(16, triton.next_power_of_2(d))
        warps = 8 if bd >= 128 else 4
        dq, dk, dv = (torch.empty_like(q) for _ in range(3))
        qdq = torch.empty((b, h, t_len), dtype=torch.float32, device=q.device)
        dgate = torch.empty((b, h, t_len), dtype=torch.float32, device=q.device)
        _dq_kernel[(b * h,)](q, k, v, grad_out, g, dq, qdq, t_len, d, BT=BT, BD=bd, num_warps=warps)
        _dkdv_kernel[(b * h,)](q, k, v, grad_out, g, gate, qdq, dk, dv, dgate, t_len, d, GATE_BIAS,
                               BT=BT, BD=bd, num_warps=warps)
        return dq, dk, dv, dgate
