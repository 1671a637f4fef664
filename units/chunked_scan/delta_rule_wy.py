"""WY factors of the chunked (gated) delta rule: ``W = T (K e^G)``, ``U = T V`` with
``T = (I + A)^-1 diag(beta)`` per chunk of 64 tokens (``delta_rule.py``'s docstring has the
recurrence and the chunked form), and the jit helpers the delta-rule kernels share.

One program per chunk and head: parallel over chunks. ``_wy_inverse_kernel`` inverts ``I + A`` by
blockwise forward substitution on 16 x 16 blocks: the four diagonal blocks of ``I + A`` by row-wise
substitution in registers, stacked into one [4, 16, 16] substitution, then the off-diagonal blocks
of the inverse as ``X_rc = -X_rr sum_{c <= m < r} A_rm X_mc`` with float32 MMAs; it stores the
inverse in bf16. Every intermediate is a block of the true inverse, so nothing grows; the
truncated Neumann product ``(I - A)(I + A^2)(I + A^4)...`` is exact too but its partial products
reach 1e5 for mean-shifted keys (|k_i . k_j| near 0.4) and cancel, losing float32 digits.
``_wy_apply_kernel`` multiplies it into ``beta K e^G`` and ``beta V``: two 64-row MMAs. Both in
one kernel ran 2.5x slower on the H200 (the ``part`` rows of
``bench/results/sweep-delta-rule/delta-rule-sweep-h200-2026-12-03.jsonl``): every block live at once, it spilled.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

# Chunk 64 = four 16-row blocks (the MMA minimum, and FLA's solve_tril layout). On the H200 at
# B8 H16 T2048 D128 (bench/results/sweep-delta-rule/delta-rule-sweep-h200-2026-12-03.jsonl) the WY factors took
# 0.45 ms in one kernel at 4 warps (255 registers and 3.5 KB of spills per thread when compiled for
# sm_90) and 0.18 ms split, the inverse at 1 warp (0.22 ms at 2 warps, 0.35 ms at 4: the
# substitution's [16, 16] reductions cost more across more warps), applied at 4 warps.
BT, BC = 64, 16
WY_INVERSE_WARPS, WY_APPLY_WARPS = 1, 4
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
def chunk_rows(i_t, offs_t, offs_k, offs_v, mask_k, mask_v, base, T, D):
    """Chunk ``i_t``'s tokens ``t`` [BT], their mask, the masks and element offsets of its
    ``[BT, BK]`` key-wide and ``[BT, BV]`` value-wide tiles in a ``[B, H, T, D]`` tensor at ``base``:
    ``(t, mask_t, mask_tk, mask_tv, p_k, p_v)``."""
    t = i_t * offs_t.shape[0] + offs_t
    mask_t = t < T
    p_t = base + t[:, None] * D
    return (t, mask_t, mask_t[:, None] & mask_k[None, :], mask_t[:, None] & mask_v[None, :],
            p_t + offs_k[None, :], p_t + offs_v[None, :])


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

def wy_factors(k: torch.Tensor, v: torch.Tensor, beta: torch.Tensor, gate: torch.Tensor, gated: bool,
               gate_bias: float, *, num_warps: int = WY_INVERSE_WARPS,
               apply_warps: int = WY_APPLY_WARPS) -> tuple[torch.Tensor, torch.Tensor]:
    """``(W, U)`` of every chunk, bfloat16 ``[B, H, T, D]`` each.

    Args:
        k, v: bfloat16 ``[B, H, T, D]``, contiguous, k raw (normalised in the kernels).
        beta, gate: float32 ``[B, H, T]`` raw logits (gate unused unless ``gated``).
        num_warps: the inverse kernel's warps; apply_warps: the applying kernel's.

    The inverse ``(I + A)^-1`` of every chunk goes through a bf16 ``[B*H, T, BT]`` buffer.
    """
    b, h, t_len, d = k.shape
    bk = max(16, triton.next_power_of_2(d))
    w = torch.empty_like(k)
    u = torch.empty_like(v)
    grid = (triton.cdiv(t_len, BT), b * h)
    ainv = torch.empty(b * h, t_len, BT, device=k.device, dtype=k.dtype)
    _wy_inverse_kernel[grid](k, beta, gate, ainv, t_len, d, float(gate_bias), GATED=gated, BC=BC, BK=bk,
                             num_warps=num_warps)
    _wy_apply_kernel[grid](k, v, beta, gate, ainv, w, u, t_len, d, float(gate_bias), GATED=gated, BT=BT, BK=bk,
                           num_warps=apply_warps)
    return w, u
