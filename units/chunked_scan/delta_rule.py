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

Two kernels. ``_wy_fwd_kernel`` (one program per chunk and head: parallel over chunks) builds W and
U. It inverts ``I + A`` by blockwise forward substitution on 16 x 16 blocks: each diagonal block of
``I + A`` by row-wise substitution in registers, then the off-diagonal blocks of the inverse as
``X_rc = -X_rr sum_{c <= m < r} A_rm X_mc`` with float32 MMAs. Every intermediate is a block of the
true inverse, so nothing grows; the truncated Neumann product ``(I - A)(I + A^2)(I + A^4)...`` is
exact too but its partial products reach 1e5 for mean-shifted keys (|k_i . k_j| near 0.4) and
cancel, losing float32 digits. ``_delta_fwd_kernel`` (one program per 64 value columns and head)
walks the chunks with the float32 state in registers: five bf16 MMAs per chunk.

W and U are stored in bfloat16 (like FLA); q and k are normalised on load in both kernels.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

# Chunk 64 = four 16-row blocks (the MMA minimum, and FLA's solve_tril layout); BV = 64 gives
# B*H*D/64 = 256 state programs at B=8, H=16, D=128 on 132 SMs. On the H200 at that shape
# (evals/results/delta-rule-sweep-h200-2026-12-03.jsonl) the walk at 64 columns, 4 warps and 2
# stages was the fastest of the swept walks; the WY factors took 0.45 ms in one kernel at 4 warps
# and 0.18 ms split, its inverse at 1 warp (0.22 ms at 2 warps, 0.35 ms at 4: the substitution's
# [16, 16] reductions cost more across more warps), applied at 4 warps.
BT, BC, BV = 64, 16, 64
NUM_WARPS, NUM_STAGES = 4, 2
WY_INVERSE_WARPS = 1
L2_EPS = tl.constexpr(1e-6)  # x / sqrt(sum(x^2) + eps), FLA's l2norm epsilon


@triton.jit
def inv_norm_rows(x):
    """``1 / sqrt(sum(x^2) + eps)`` per row of ``x`` [R, BK], float32 [R]. Kernels keep q and k raw
    (exact bf16 MMA operands) and apply these factors to the float32 products instead."""
    x = x.to(tl.float32)
    return tl.rsqrt(tl.sum(x * x, axis=1) + L2_EPS)


@triton.jit
def gate_log_decay(gate, base_t, t, mask_t, bias):
    """``logsigmoid(gate + bias)`` at tokens ``t`` (0 where masked), float32."""
    y = tl.load(gate + base_t + t, mask=mask_t, other=0.0).to(tl.float32) + bias
    return tl.where(mask_t, tl.minimum(y, 0.0) - tl.log(1.0 + tl.exp(-tl.abs(y))), 0.0)


@triton.jit
def _load_block(k, v, beta, gate, base, base_t, t0, T, D, bias, G_start,
                GATED: tl.constexpr, BC: tl.constexpr, BK: tl.constexpr):
    """Rows ``t0 .. t0 + BC`` of one chunk: raw k (bf16 [BC, BK]), its inverse norms [BC], v (bf16
    [BC, BK]), beta [BC], cumulative log-decay G [BC] (continuing from ``G_start``)."""
    t = t0 + tl.arange(0, BC)  # [BC]
    offs_k = tl.arange(0, BK)  # [BK]
    mask_t = t < T
    mask = mask_t[:, None] & (offs_k[None, :] < D)
    p = base + t[:, None] * D + offs_k[None, :]
    b_k = tl.load(k + p, mask=mask, other=0.0)  # [BC, BK]
    b_rk = inv_norm_rows(b_k)  # [BC]
    b_v = tl.load(v + p, mask=mask, other=0.0)  # [BC, BK]
    b_beta = tl.load(beta + base_t + t, mask=mask_t, other=0.0).to(tl.float32)
    b_beta = tl.where(mask_t, 1.0 / (1.0 + tl.exp(-b_beta)), 0.0)  # [BC]
    if GATED:
        b_G = G_start + tl.cumsum(gate_log_decay(gate, base_t, t, mask_t, bias), axis=0)  # [BC]
    else:
        b_G = tl.zeros((BC,), tl.float32)
    return b_k, b_rk, b_v, b_beta, b_G


@triton.jit
def _a_block(k_r, k_c, rk_r, rk_c, beta_r, G_r, G_c, DIAG: tl.constexpr, BC: tl.constexpr):
    """``A_rc = diag(beta_r) (k_r k_c^T * exp(G_r,i - G_c,j))`` [BC, BC] float32 for normalised
    keys (raw ``k`` times inverse norms ``rk``); strictly lower when ``DIAG``."""
    a = tl.dot(k_r, tl.trans(k_c)) * rk_r[:, None] * rk_c[None, :]  # [BC, BC]
    diff = G_r[:, None] - G_c[None, :]
    if DIAG:
        rows = tl.arange(0, BC)
        lower = rows[:, None] > rows[None, :]
        a = tl.where(lower, a * tl.exp(tl.where(lower, diff, 0.0)), 0.0)
    else:
        a = a * tl.exp(diff)
    return a * beta_r[:, None]


@triton.jit
def _unit_lower_inverse(a, BC: tl.constexpr):
    """``(I + a)^-1`` for strictly lower-triangular ``a`` [BC, BC] by row-wise forward substitution:
    row i of the inverse is ``e_i - sum_{j < i} a_ij X_j``."""
    rows = tl.arange(0, BC)
    x = tl.where(rows[:, None] == rows[None, :], 1.0, 0.0)  # [BC, BC] identity
    for i in range(1, BC):
        a_i = tl.sum(tl.where(rows[:, None] == i, a, 0.0), axis=0)  # [BC] row i of a, over j
        x_i = tl.sum(a_i[:, None] * x, axis=0)  # [BC] sum_j a_ij X_j (rows j >= i of x are e_j, a_ij = 0)
        x = tl.where(rows[:, None] == i, x - x_i[None, :], x)
    return x


@triton.jit
def _unit_lower_inverse4(a0, a1, a2, a3, BC: tl.constexpr):
    """``(I + a_r)^-1`` of four strictly lower-triangular ``a_r`` [BC, BC] at once: the same
    row-wise substitution on the stacked [4, BC, BC] blocks, BC - 1 steps instead of 4 (BC - 1)."""
    a = tl.permute(tl.reshape(tl.join(tl.join(a0, a1), tl.join(a2, a3)), (BC, BC, 4)), (2, 0, 1))  # [4, BC, BC]
    rows = tl.arange(0, BC)
    row_of = rows[None, :, None]  # [1, BC, 1]
    x = tl.where(row_of == rows[None, None, :], 1.0, 0.0) + tl.zeros((4, BC, BC), tl.float32)  # identities
    for i in range(1, BC):
        a_i = tl.sum(tl.where(row_of == i, a, 0.0), axis=1)  # [4, BC] row i of each a, over j
        x_i = tl.sum(a_i[:, :, None] * x, axis=1)  # [4, BC] sum_j a_ij X_j
        x = tl.where(row_of == i, x - x_i[:, None, :], x)
    x01, x23 = tl.split(tl.reshape(tl.permute(x, (1, 2, 0)), (BC, BC, 2, 2)))  # [BC, BC, 2] each
    x0, x1 = tl.split(x01)
    x2, x3 = tl.split(x23)
    return x0, x1, x2, x3


@triton.jit
def _mm(a, b):
    return tl.dot(a, b, input_precision="ieee")


@triton.jit
def _store_wu(w, u, x_r0, x_r1, x_r2, x_r3, kb0, kb1, kb2, kb3, vb0, vb1, vb2, vb3, base, t0, T, D,
              NBLK: tl.constexpr, BC: tl.constexpr, BK: tl.constexpr):
    """Rows ``t0 .. t0 + BC`` of ``W = X (beta K e^G)`` and ``U = X (beta V)`` from the first
    ``NBLK`` blocks ``X_rc`` of one block row of the inverse."""
    dt = kb0.dtype
    b_w = tl.dot(x_r0.to(dt), kb0)
    b_u = tl.dot(x_r0.to(dt), vb0)
    if NBLK > 1:
        b_w = tl.dot(x_r1.to(dt), kb1, b_w)
        b_u = tl.dot(x_r1.to(dt), vb1, b_u)
    if NBLK > 2:
        b_w = tl.dot(x_r2.to(dt), kb2, b_w)
        b_u = tl.dot(x_r2.to(dt), vb2, b_u)
    if NBLK > 3:
        b_w = tl.dot(x_r3.to(dt), kb3, b_w)
        b_u = tl.dot(x_r3.to(dt), vb3, b_u)
    t = t0 + tl.arange(0, BC)
    offs_k = tl.arange(0, BK)
    mask = (t[:, None] < T) & (offs_k[None, :] < D)
    p = base + t[:, None] * D + offs_k[None, :]
    tl.store(w + p, b_w.to(w.dtype.element_ty), mask=mask)
    tl.store(u + p, b_u.to(u.dtype.element_ty), mask=mask)


@triton.jit
def _wy_fwd_kernel(k, v, beta, gate, w, u, T, D, bias,
                   GATED: tl.constexpr, BC: tl.constexpr, BK: tl.constexpr):
    i_t, i_bh = tl.program_id(0), tl.program_id(1)
    base = i_bh.to(tl.int64) * T * D
    base_t = i_bh.to(tl.int64) * T
    t0 = i_t * 4 * BC
    k0, rk0, v0, be0, G0 = _load_block(k, v, beta, gate, base, base_t, t0, T, D, bias, 0.0, GATED, BC, BK)
    # Each block continues the chunk's cumulative decay from the previous block's last row (G is
    # non-increasing since g <= 0, so that is the block's minimum).
    k1, rk1, v1, be1, G1 = _load_block(k, v, beta, gate, base, base_t, t0 + BC, T, D, bias, tl.min(G0, axis=0),
                                  GATED, BC, BK)
    k2, rk2, v2, be2, G2 = _load_block(k, v, beta, gate, base, base_t, t0 + 2 * BC, T, D, bias, tl.min(G1, axis=0),
                                  GATED, BC, BK)
    k3, rk3, v3, be3, G3 = _load_block(k, v, beta, gate, base, base_t, t0 + 3 * BC, T, D, bias, tl.min(G2, axis=0),
                                  GATED, BC, BK)

    # Diagonal blocks of (I + A)^-1.
    x00 = _unit_lower_inverse(_a_block(k0, k0, rk0, rk0, be0, G0, G0, True, BC), BC)
    x11 = _unit_lower_inverse(_a_block(k1, k1, rk1, rk1, be1, G1, G1, True, BC), BC)
    x22 = _unit_lower_inverse(_a_block(k2, k2, rk2, rk2, be2, G2, G2, True, BC), BC)
    x33 = _unit_lower_inverse(_a_block(k3, k3, rk3, rk3, be3, G3, G3, True, BC), BC)
    # Off-diagonal blocks: X_rc = -X_rr sum_{c <= m < r} A_rm X_mc.
    a10 = _a_block(k1, k0, rk1, rk0, be1, G1, G0, False, BC)
    a20 = _a_block(k2, k0, rk2, rk0, be2, G2, G0, False, BC)
    a21 = _a_block(k2, k1, rk2, rk1, be2, G2, G1, False, BC)
    a30 = _a_block(k3, k0, rk3, rk0, be3, G3, G0, False, BC)
    a31 = _a_block(k3, k1, rk3, rk1, be3, G3, G1, False, BC)
    a32 = _a_block(k3, k2, rk3, rk2, be3, G3, G2, False, BC)
    x10 = -_mm(x11, _mm(a10, x00))
    x21 = -_mm(x22, _mm(a21, x11))
    x20 = -_mm(x22, _mm(a20, x00) + _mm(a21, x10))
    x32 = -_mm(x33, _mm(a32, x22))
    x31 = -_mm(x33, _mm(a31, x11) + _mm(a32, x21))
    x30 = -_mm(x33, _mm(a30, x00) + _mm(a31, x10) + _mm(a32, x20))

    # Right-hand sides beta K e^G and beta V, bf16 [BC, BK].
    dt = k.dtype.element_ty
    kb0 = (k0 * (rk0 * be0 * tl.exp(G0))[:, None]).to(dt)
    kb1 = (k1 * (rk1 * be1 * tl.exp(G1))[:, None]).to(dt)
    kb2 = (k2 * (rk2 * be2 * tl.exp(G2))[:, None]).to(dt)
    kb3 = (k3 * (rk3 * be3 * tl.exp(G3))[:, None]).to(dt)
    vb0, vb1 = (v0 * be0[:, None]).to(dt), (v1 * be1[:, None]).to(dt)
    vb2, vb3 = (v2 * be2[:, None]).to(dt), (v3 * be3[:, None]).to(dt)
    _store_wu(w, u, x00, x00, x00, x00, kb0, kb1, kb2, kb3, vb0, vb1, vb2, vb3, base, t0, T, D, 1, BC, BK)
    _store_wu(w, u, x10, x11, x11, x11, kb0, kb1, kb2, kb3, vb0, vb1, vb2, vb3, base, t0 + BC, T, D, 2, BC, BK)
    _store_wu(w, u, x20, x21, x22, x22, kb0, kb1, kb2, kb3, vb0, vb1, vb2, vb3, base, t0 + 2 * BC, T, D, 3, BC, BK)
    _store_wu(w, u, x30, x31, x32, x33, kb0, kb1, kb2, kb3, vb0, vb1, vb2, vb3, base, t0 + 3 * BC, T, D, 4, BC, BK)


@triton.jit
def _load_keys(k, beta, gate, base, base_t, t0, T, D, bias, G_start,
               GATED: tl.constexpr, BC: tl.constexpr, BK: tl.constexpr):
    """Rows ``t0 .. t0 + BC`` of one chunk: raw k (bf16 [BC, BK]), its inverse norms [BC], beta
    [BC], cumulative log-decay G [BC] (continuing from ``G_start``)."""
    t = t0 + tl.arange(0, BC)  # [BC]
    offs_k = tl.arange(0, BK)  # [BK]
    mask_t = t < T
    b_k = tl.load(k + base + t[:, None] * D + offs_k[None, :], mask=mask_t[:, None] & (offs_k[None, :] < D),
                  other=0.0)  # [BC, BK]
    b_beta = tl.load(beta + base_t + t, mask=mask_t, other=0.0).to(tl.float32)
    b_beta = tl.where(mask_t, 1.0 / (1.0 + tl.exp(-b_beta)), 0.0)  # [BC]
    if GATED:
        b_G = G_start + tl.cumsum(gate_log_decay(gate, base_t, t, mask_t, bias), axis=0)  # [BC]
    else:
        b_G = tl.zeros((BC,), tl.float32)
    return b_k, inv_norm_rows(b_k), b_beta, b_G


@triton.jit
def _store_inverse_row(ainv, x0, x1, x2, x3, base_a, t0, T, BC: tl.constexpr):
    """Rows ``t0 .. t0 + BC`` of a chunk's ``(I + A)^-1`` (bf16, ``4 * BC`` columns) from its four
    blocks ``x0 .. x3`` [BC, BC] float32."""
    t = t0 + tl.arange(0, BC)
    p = ainv + base_a + t[:, None] * (4 * BC) + tl.arange(0, BC)[None, :]
    mask = (t < T)[:, None]
    dt = ainv.dtype.element_ty
    tl.store(p, x0.to(dt), mask=mask)
    tl.store(p + BC, x1.to(dt), mask=mask)
    tl.store(p + 2 * BC, x2.to(dt), mask=mask)
    tl.store(p + 3 * BC, x3.to(dt), mask=mask)


@triton.jit
def _wy_inverse_kernel(k, beta, gate, ainv, T, D, bias, GATED: tl.constexpr, BC: tl.constexpr, BK: tl.constexpr):
    """``(I + A)^-1`` of one chunk and head, bf16 [4 * BC, 4 * BC] rows into ``ainv [B*H, T, 4 * BC]``."""
    i_t, i_bh = tl.program_id(0), tl.program_id(1)
    base = i_bh.to(tl.int64) * T * D
    base_t = i_bh.to(tl.int64) * T
    t0 = i_t * 4 * BC
    k0, rk0, be0, G0 = _load_keys(k, beta, gate, base, base_t, t0, T, D, bias, 0.0, GATED, BC, BK)
    k1, rk1, be1, G1 = _load_keys(k, beta, gate, base, base_t, t0 + BC, T, D, bias, tl.min(G0, axis=0),
                                  GATED, BC, BK)
    k2, rk2, be2, G2 = _load_keys(k, beta, gate, base, base_t, t0 + 2 * BC, T, D, bias, tl.min(G1, axis=0),
                                  GATED, BC, BK)
    k3, rk3, be3, G3 = _load_keys(k, beta, gate, base, base_t, t0 + 3 * BC, T, D, bias, tl.min(G2, axis=0),
                                  GATED, BC, BK)
    # Every block of A first, so the keys are dead during the substitution's loop.
    a00 = _a_block(k0, k0, rk0, rk0, be0, G0, G0, True, BC)
    a11 = _a_block(k1, k1, rk1, rk1, be1, G1, G1, True, BC)
    a22 = _a_block(k2, k2, rk2, rk2, be2, G2, G2, True, BC)
    a33 = _a_block(k3, k3, rk3, rk3, be3, G3, G3, True, BC)
    a10 = _a_block(k1, k0, rk1, rk0, be1, G1, G0, False, BC)
    a20 = _a_block(k2, k0, rk2, rk0, be2, G2, G0, False, BC)
    a21 = _a_block(k2, k1, rk2, rk1, be2, G2, G1, False, BC)
    a30 = _a_block(k3, k0, rk3, rk0, be3, G3, G0, False, BC)
    a31 = _a_block(k3, k1, rk3, rk1, be3, G3, G1, False, BC)
    a32 = _a_block(k3, k2, rk3, rk2, be3, G3, G2, False, BC)
    x00, x11, x22, x33 = _unit_lower_inverse4(a00, a11, a22, a33, BC)
    x10 = -_mm(x11, _mm(a10, x00))
    x21 = -_mm(x22, _mm(a21, x11))
    x20 = -_mm(x22, _mm(a20, x00) + _mm(a21, x10))
    x32 = -_mm(x33, _mm(a32, x22))
    x31 = -_mm(x33, _mm(a31, x11) + _mm(a32, x21))
    x30 = -_mm(x33, _mm(a30, x00) + _mm(a31, x10) + _mm(a32, x20))
    z = tl.zeros((BC, BC), tl.float32)
    base_a = base_t * 4 * BC
    _store_inverse_row(ainv, x00, z, z, z, base_a, t0, T, BC)
    _store_inverse_row(ainv, x10, x11, z, z, base_a, t0 + BC, T, BC)
    _store_inverse_row(ainv, x20, x21, x22, z, base_a, t0 + 2 * BC, T, BC)
    _store_inverse_row(ainv, x30, x31, x32, x33, base_a, t0 + 3 * BC, T, BC)


@triton.jit
def _wy_apply_kernel(k, v, beta, gate, ainv, w, u, T, D, bias,
                     GATED: tl.constexpr, BT: tl.constexpr, BK: tl.constexpr):
    """``W = (I + A)^-1 (beta K e^G)`` and ``U = (I + A)^-1 (beta V)`` of one chunk and head: two
    [BT, BT] x [BT, BK] MMAs."""
    i_t, i_bh = tl.program_id(0), tl.program_id(1)
    base = i_bh.to(tl.int64) * T * D
    base_t = i_bh.to(tl.int64) * T
    t = i_t * BT + tl.arange(0, BT)  # [BT]
    offs_k = tl.arange(0, BK)
    mask_t = t < T
    mask = mask_t[:, None] & (offs_k[None, :] < D)
    p = base + t[:, None] * D + offs_k[None, :]
    b_k = tl.load(k + p, mask=mask, other=0.0)  # [BT, BK] raw
    b_beta = tl.load(beta + base_t + t, mask=mask_t, other=0.0).to(tl.float32)
    b_beta = tl.where(mask_t, 1.0 / (1.0 + tl.exp(-b_beta)), 0.0)  # [BT]
    b_kscale = inv_norm_rows(b_k) * b_beta
    if GATED:
        b_kscale = b_kscale * tl.exp(tl.cumsum(gate_log_decay(gate, base_t, t, mask_t, bias), axis=0))
    dt = k.dtype.element_ty
    b_a = tl.load(ainv + base_t * BT + t[:, None] * BT + tl.arange(0, BT)[None, :], mask=mask_t[:, None],
                  other=0.0)  # [BT, BT] bf16
    b_w = tl.dot(b_a, (b_k * b_kscale[:, None]).to(dt))
    tl.store(w + p, b_w.to(w.dtype.element_ty), mask=mask)
    b_v = tl.load(v + p, mask=mask, other=0.0)  # [BT, BK]
    b_u = tl.dot(b_a, (b_v * b_beta[:, None]).to(dt))
    tl.store(u + p, b_u.to(u.dtype.element_ty), mask=mask)


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
        t = i_t * BT + offs_t  # [BT]
        mask_t = t < T
        mask_tk = mask_t[:, None] & mask_k[None, :]
        mask_tv = mask_t[:, None] & mask_v[None, :]
        p_k = base + t[:, None] * D + offs_k[None, :]
        p_v = base + t[:, None] * D + offs_v[None, :]
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


def wy_factors(k: torch.Tensor, v: torch.Tensor, beta: torch.Tensor, gate: torch.Tensor, gated: bool,
               gate_bias: float, *, num_warps: int = WY_INVERSE_WARPS, split: bool = True,
               apply_warps: int = NUM_WARPS) -> tuple[torch.Tensor, torch.Tensor]:
    """``(W, U)`` of every chunk, bfloat16 ``[B, H, T, D]`` each, from contiguous k, v (bfloat16
    ``[B, H, T, D]``, k raw) and raw beta, gate (float32 ``[B, H, T]``; gate unused unless
    ``gated``), one program per chunk and head: ``_wy_fwd_kernel``, or with ``split`` the inverse
    ``(I + A)^-1`` (bf16 ``[B*H, T, BT]``, ``num_warps``) and then W and U as two [BT, BT] x [BT, D]
    MMAs (``apply_warps``)."""
    b, h, t_len, d = k.shape
    bk = max(16, triton.next_power_of_2(d))
    w = torch.empty_like(k)
    u = torch.empty_like(v)
    grid = (triton.cdiv(t_len, BT), b * h)
    if split:
        ainv = torch.empty(b * h, t_len, BT, device=k.device, dtype=k.dtype)
        _wy_inverse_kernel[grid](k, beta, gate, ainv, t_len, d, float(gate_bias), GATED=gated, BC=BC, BK=bk,
                                 num_warps=num_warps)
        _wy_apply_kernel[grid](k, v, beta, gate, ainv, w, u, t_len, d, float(gate_bias), GATED=gated, BT=BT,
                               BK=bk, num_warps=apply_warps)
        return w, u
    _wy_fwd_kernel[grid](k, v, beta, gate, w, u, t_len, d, float(gate_bias), GATED=gated, BC=BC, BK=bk,
                         num_warps=num_warps)
    return w, u


def chunk_delta_rule(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, beta: torch.Tensor,
                     gate: torch.Tensor | None = None, gate_bias: float = 0.0, *, block_v: int = BV,
                     num_warps: int = NUM_WARPS, num_stages: int = NUM_STAGES,
                     wy_warps: int = WY_INVERSE_WARPS, two_pass: bool = False, out_block_v: int = BV,
                     out_warps: int = NUM_WARPS, wy_split: bool = True,
                     apply_warps: int = NUM_WARPS) -> torch.Tensor:
    """DeltaNet (``gate is None``) or Gated DeltaNet forward with in-kernel q/k L2 norm and sigmoid.

    Args:
        q, k, v: bfloat16 ``[B, H, T, D]``, contiguous (any T; D <= 256). q and k are
            L2-normalised along D inside the kernels.
        beta: float32 ``[B, H, T]`` raw logits; the writing strength is ``sigmoid(beta)``.
        gate: float32 ``[B, H, T]`` raw gate logits or None; the log-decay is
            ``logsigmoid(gate + gate_bias)``.
        block_v, num_warps, num_stages: value columns per program, warps and pipeline stages of the
            chunk walk; wy_warps: the WY kernel's warps (``wy_split``: its inverse kernel's, and
            ``apply_warps`` those of the kernel applying it; ``wy_factors``).
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
    w, u = wy_factors(k, v, beta, gate, gated, gate_bias, num_warps=wy_warps, split=wy_split, apply_warps=apply_warps)
    if two_pass:
        # Imported here: the two-pass module reuses this module's jit helpers.
        from units.chunked_scan.delta_rule_two_pass import delta_two_pass

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
