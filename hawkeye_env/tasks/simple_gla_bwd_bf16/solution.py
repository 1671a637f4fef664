"""Expert Triton solution for ``simple_gla_bwd_bf16``: chunked walks over each head, built on the
``chunked_scan`` unit's chunk helpers, with every carried state split over programs.

With ``G`` the chunk-local cumulative log-decay (``units.chunked_scan.kernel.load_chunk_decay``,
every exponent below is ``<= 0``) and ``C = exp(G_i - G_j) [j <= i]`` the causal decay:

1. ``_dq_kernel`` walks the chunks forward, carrying the forward's state
   ``S = sum_s exp(G_end - G_s) k_s^T v_s`` for one block of its rows (float32 ``[BK, D]``,
   ``next_state``): ``dq = (dO S^T) * exp(G) + ((dO v^T) * C) k``, and ``q . dq`` over its block.
2. ``_dk_kernel`` walks them backward, carrying the state gradient
   ``dH = sum_{t later} exp(G_t - G_end) q_t^T dO_t`` for one block of rows (``[BK, D]``):
   ``dk = ((dO v^T) * C)^T q + (v dH^T) * exp(G_last - G)``, and ``k . dk`` over its block.
3. ``_dv_kernel`` walks them backward with ``dH`` for one block of columns (``[D, BV]``):
   ``dv = ((q k^T) * C)^T dO + (k dH) * exp(G_last - G)``.
4. ``_dgate_kernel``: the log-decay's gradient ``dG_t = q_t . dq_t - k_t . dk_t`` (the blocks'
   partial dot products summed) summed over every token from t on, by a reverse walk with a float32
   carry and a suffix sum inside the chunk, times ``sigmoid(-(gate + 4))`` (the ``logsigmoid``).

A whole ``[D, D]`` float32 state per program spilled registers at D = 128 (Triton's sm_90
cross-compile, cuobjdump's resource usage, 8 warps: 528 bytes a thread for a dq walk, 1136 for a
walk computing dk and dv together); with blocks of 64 rows or columns the dq, dk and dv walks spill
40, 32 and 0 bytes (blocks of 32 still spilled dk and recompute ``dO v^T`` twice as often). Not yet
timed on a GPU. MMA operands are bfloat16, accumulation and every decay
float32; no atomics. The log-decay comes from the unit's ``log_decay`` kernel, as in the forward's
expert.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl
from torch import nn

from units.chunked_scan.kernel import BT, load_chunk, load_chunk_decay, log_decay, next_state

GATE_BIAS = 4.0  # the task's logsigmoid offset (hawkeye_env/tasks/simple_gla_bwd_bf16/task.py)
# State rows (dq, dk) or columns (dv) per program: 64 on the GPU (a [64, 128] float32 state), 16
# under the CPU interpreter so that D = 32 splits in two and the partial sums are exercised.
GPU_BLOCK, CPU_BLOCK = 64, 16


@triton.jit
def _decays(g, i_bh, t, mask_t, T, BT: tl.constexpr):
    """A chunk's cumulative log-decay ``G [BT]``, its last value, ``C [BT, BT]`` and ``exp(G_last - G)``."""
    b_g, b_G = load_chunk_decay(g, i_bh, t, mask_t, T)
    b_G_last = tl.sum(b_g, axis=0)  # padded g are 0, so this is G at the last real token
    causal = tl.arange(0, BT)[:, None] >= tl.arange(0, BT)[None, :]
    b_C = tl.exp(tl.where(causal, b_G[:, None] - b_G[None, :], float("-inf")))
    return b_G, b_G_last, b_C, tl.exp(b_G_last - b_G)[:, None]


@triton.jit
def _dq_kernel(q, k, v, do, g, dq, qdq, T, D, BT: tl.constexpr, BK: tl.constexpr, BD: tl.constexpr):
    i_k, i_bh = tl.program_id(0), tl.program_id(1)
    base = i_bh.to(tl.int64) * T * D
    offs_k, offs = i_k * BK + tl.arange(0, BK), tl.arange(0, BD)
    mask_k, mask_d = offs_k < D, offs < D
    b_S = tl.zeros([BK, BD], dtype=tl.float32)  # forward state, rows offs_k
    for start in range(0, T, BT):
        t = start + tl.arange(0, BT)
        mask_t = t < T
        b_q = load_chunk(q, base, t, mask_t, offs_k, mask_k, D)  # [BT, BK]
        b_k = load_chunk(k, base, t, mask_t, offs_k, mask_k, D)
        b_v = load_chunk(v, base, t, mask_t, offs, mask_d, D)  # [BT, BD]
        b_do = load_chunk(do, base, t, mask_t, offs, mask_d, D)
        b_G, b_G_last, b_C, _ = _decays(g, i_bh, t, mask_t, T, BT)
        b_dq = tl.dot(b_do, tl.trans(b_S).to(b_do.dtype)) * tl.exp(b_G)[:, None]  # [BT, BK]
        b_ds = (tl.dot(b_do, tl.trans(b_v)) * b_C).to(b_k.dtype)  # [BT, BT]
        b_dq = tl.dot(b_ds, b_k, b_dq)
        tl.store(dq + base + t[:, None] * D + offs_k[None, :], b_dq.to(dq.dtype.element_ty),
                 mask=mask_t[:, None] & mask_k[None, :])
        row = (i_k * tl.num_programs(1) + i_bh).to(tl.int64) * T + t
        tl.store(qdq + row, tl.sum(b_dq * b_q.to(tl.float32), axis=1), mask=mask_t)
        b_S = next_state(b_k, b_v, b_G, b_G_last, b_S)


@triton.jit
def _dk_kernel(q, k, v, do, g, dk, kdk, T, D, BT: tl.constexpr, BK: tl.constexpr, BD: tl.constexpr):
    i_k, i_bh = tl.program_id(0), tl.program_id(1)
    base = i_bh.to(tl.int64) * T * D
    offs_k, offs = i_k * BK + tl.arange(0, BK), tl.arange(0, BD)
    mask_k, mask_d = offs_k < D, offs < D
    b_dH = tl.zeros([BK, BD], dtype=tl.float32)  # state gradient, rows offs_k
    n_chunks = tl.cdiv(T, BT)
    for i in range(0, n_chunks):
        t = (n_chunks - 1 - i) * BT + tl.arange(0, BT)
        mask_t = t < T
        b_q = load_chunk(q, base, t, mask_t, offs_k, mask_k, D)  # [BT, BK]
        b_k = load_chunk(k, base, t, mask_t, offs_k, mask_k, D)
        b_v = load_chunk(v, base, t, mask_t, offs, mask_d, D)  # [BT, BD]
        b_do = load_chunk(do, base, t, mask_t, offs, mask_d, D)
        b_G, b_G_last, b_C, b_tail = _decays(g, i_bh, t, mask_t, T, BT)
        b_ds = (tl.dot(b_do, tl.trans(b_v)) * b_C).to(b_q.dtype)  # [BT, BT]
        b_dk = tl.dot(tl.trans(b_ds), b_q) + tl.dot(b_v, tl.trans(b_dH).to(b_v.dtype)) * b_tail  # [BT, BK]
        tl.store(dk + base + t[:, None] * D + offs_k[None, :], b_dk.to(dk.dtype.element_ty),
                 mask=mask_t[:, None] & mask_k[None, :])
        row = (i_k * tl.num_programs(1) + i_bh).to(tl.int64) * T + t
        tl.store(kdk + row, tl.sum(b_dk * b_k.to(tl.float32), axis=1), mask=mask_t)
        b_qg = (b_q * tl.exp(b_G)[:, None]).to(b_do.dtype)
        b_dH = b_dH * tl.exp(b_G_last) + tl.dot(tl.trans(b_qg), b_do)


@triton.jit
def _dv_kernel(q, k, do, g, dv, T, D, BT: tl.constexpr, BV: tl.constexpr, BD: tl.constexpr):
    i_v, i_bh = tl.program_id(0), tl.program_id(1)
    base = i_bh.to(tl.int64) * T * D
    offs_v, offs = i_v * BV + tl.arange(0, BV), tl.arange(0, BD)
    mask_v, mask_d = offs_v < D, offs < D
    b_dH = tl.zeros([BD, BV], dtype=tl.float32)  # state gradient, columns offs_v
    n_chunks = tl.cdiv(T, BT)
    for i in range(0, n_chunks):
        t = (n_chunks - 1 - i) * BT + tl.arange(0, BT)
        mask_t = t < T
        b_q = load_chunk(q, base, t, mask_t, offs, mask_d, D)  # [BT, BD]
        b_k = load_chunk(k, base, t, mask_t, offs, mask_d, D)
        b_do = load_chunk(do, base, t, mask_t, offs_v, mask_v, D)  # [BT, BV]
        b_G, b_G_last, b_C, b_tail = _decays(g, i_bh, t, mask_t, T, BT)
        b_a = (tl.dot(b_q, tl.trans(b_k)) * b_C).to(b_do.dtype)  # [BT, BT]
        b_dv = tl.dot(tl.trans(b_a), b_do) + tl.dot(b_k, b_dH.to(b_k.dtype)) * b_tail  # [BT, BV]
        tl.store(dv + base + t[:, None] * D + offs_v[None, :], b_dv.to(dv.dtype.element_ty),
                 mask=mask_t[:, None] & mask_v[None, :])
        b_qg = (b_q * tl.exp(b_G)[:, None]).to(b_do.dtype)
        b_dH = b_dH * tl.exp(b_G_last) + tl.dot(tl.trans(b_qg), b_do)


@triton.jit
def _dgate_kernel(qdq, kdk, gate, dgate, T, n_blocks, n_heads, gate_bias, BT: tl.constexpr):
    i_bh = tl.program_id(0)
    b_later = tl.zeros([1], dtype=tl.float32)  # sum of dG over the chunks already walked
    n_chunks = tl.cdiv(T, BT)
    for i in range(0, n_chunks):
        t = (n_chunks - 1 - i) * BT + tl.arange(0, BT)
        mask_t = t < T
        b_dG = tl.zeros([BT], dtype=tl.float32)
        for i_k in range(0, n_blocks):
            row = (i_k * n_heads + i_bh).to(tl.int64) * T + t
            b_dG += tl.load(qdq + row, mask=mask_t, other=0.0) - tl.load(kdk + row, mask=mask_t, other=0.0)
        b_dg = tl.sum(b_dG, axis=0) - tl.cumsum(b_dG, axis=0) + b_dG + b_later  # sum over tokens >= t
        row = i_bh.to(tl.int64) * T + t
        b_y = tl.load(gate + row, mask=mask_t, other=0.0) + gate_bias
        tl.store(dgate + row, b_dg / (1.0 + tl.exp(b_y)), mask=mask_t)  # sigmoid(-y) = 1 / (1 + e^y)
        b_later += tl.sum(b_dG, axis=0)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, k, v, gate, grad_out):
        b, h, t_len, d = q.shape
        q, k, v, grad_out, gate = (x.contiguous() for x in (q, k, v, grad_out, gate))
        g = log_decay(gate, GATE_BIAS)  # float32 [B, H, T]
        bd = max(16, triton.next_power_of_2(d))
        blk = min(bd, GPU_BLOCK if q.is_cuda else CPU_BLOCK)
        n_blocks, heads = triton.cdiv(d, blk), b * h
        warps = 8 if bd >= 128 else 4
        dq, dk, dv = (torch.empty_like(q) for _ in range(3))
        qdq, kdk = (torch.empty((n_blocks, heads, t_len), dtype=torch.float32, device=q.device) for _ in range(2))
        dgate = torch.empty((b, h, t_len), dtype=torch.float32, device=q.device)
        _dq_kernel[(n_blocks, heads)](q, k, v, grad_out, g, dq, qdq, t_len, d, BT=BT, BK=blk, BD=bd, num_warps=warps)
        _dk_kernel[(n_blocks, heads)](q, k, v, grad_out, g, dk, kdk, t_len, d, BT=BT, BK=blk, BD=bd, num_warps=warps)
        _dv_kernel[(n_blocks, heads)](q, k, grad_out, g, dv, t_len, d, BT=BT, BV=blk, BD=bd, num_warps=warps)
        _dgate_kernel[(heads,)](qdq, kdk, gate, dgate, t_len, n_blocks, heads, GATE_BIAS, BT=BT, num_warps=4)
        return dq, dk, dv, dgate
