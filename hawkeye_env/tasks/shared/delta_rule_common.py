"""Shared math of the DeltaNet tasks: the chunked delta-rule reference and the FLA baseline.

Per (batch, head), with ``S_0 = 0`` and the task's inputs already transformed (q, k L2-normalised
along D, ``beta = sigmoid(.)``, log-decays ``g <= 0``; ``g = 0`` for plain DeltaNet)::

    S_t = exp(g_t) (I - beta_t k_t^T k_t) S_{t-1} + beta_t k_t^T v_t        # [D, D]
    o_t = q_t S_t

``chunked_delta_rule`` computes the same outputs 64 tokens at a time with the WY representation
(rows are tokens, ``G`` the chunk-local cumulative log-decay, ``S`` the state at the chunk start)::

    A = strictly_lower(diag(beta) (K K^T * exp(G_i - G_j)))
    T = (I + A)^-1 diag(beta),   W = T (K * exp(G)),   U = T V
    N = U - W S                                               # the values each token writes
    O = (Q * exp(G)) S + lower_incl(Q K^T * exp(G_i - G_j)) N
    S = exp(G_last) S + (K * exp(G_last - G))^T N

Derivation: with ``n_t = beta_t (v_t - exp(g_t) S_{t-1}^T k_t)`` the recurrence is
``S_t = exp(g_t) S_{t-1} + k_t^T n_t``; unrolling ``S_{t-1}`` inside the chunk gives
``n_t + beta_t sum_{s<t} exp(G_t - G_s) (k_t . k_s) n_s = beta_t (v_t - exp(G_t) k_t S)``, the
unit lower-triangular system ``(I + A) N = diag(beta) (V - (K * exp(G)) S)``. It is exact math (a
triangular solve, no approximation), so the judge's float64 run of it is the reference.
"""

from __future__ import annotations

import torch

from hawkeye_env.tasks.shared.fla_baselines import fla_kernel, from_heads_as_batch, heads_as_batch

CHUNK = 64
L2_EPS = 1e-6  # FLA's l2norm: x / sqrt(sum(x^2) + eps)
def l2norm(x: torch.Tensor) -> torch.Tensor:
    """``x / sqrt(sum(x^2, -1) + 1e-6)`` (FLA's ``l2norm`` and ``use_qk_l2norm_in_kernel``)."""
    return x * torch.rsqrt((x * x).sum(-1, keepdim=True) + L2_EPS)


def chunked_delta_rule(q, k, v, beta, g=None) -> torch.Tensor:
    """Chunked (gated) delta rule in ``q``'s dtype.

    Args:
        q, k: ``[B, H, T, D]``, already L2-normalised; v: ``[B, H, T, Dv]``.
        beta: ``[B, H, T]`` in (0, 1); g: ``[B, H, T]`` log-decays ``<= 0`` or None (no decay).

    Returns:
        ``[B, H, T, Dv]``.
    """
    b, h, t_len, d = q.shape
    state = q.new_zeros(b, h, d, v.shape[-1])
    out = torch.empty_like(v)
    for start in range(0, t_len, CHUNK):
        sl = slice(start, min(start + CHUNK, t_len))
        qc, kc, vc, bc = q[:, :, sl], k[:, :, sl], v[:, :, sl], beta[:, :, sl]
        c = qc.shape[2]
        gc = g[:, :, sl].cumsum(-1) if g is not None else q.new_zeros(b, h, c)  # [B, H, C]
        lower = torch.ones(c, c, dtype=torch.bool, device=q.device).tril()
        decay = (gc[..., :, None] - gc[..., None, :]).masked_fill(~lower, float("-inf")).exp()  # [B, H, C, C]
        kk = (kc @ kc.transpose(-1, -2)) * decay
        a = (bc[..., :, None] * kk).tril(-1)
        eye = torch.eye(c, dtype=q.dtype, device=q.device)
        rhs = bc[..., None] * torch.cat([kc * gc.exp()[..., None], vc], dim=-1)  # diag(beta) [K e^G, V]
        wu = torch.linalg.solve_triangular(eye + a, rhs, upper=False, unitriangular=True)
        w, u = wu[..., :d], wu[..., d:]
        new = u - w @ state  # [B, H, C, Dv]
        out[:, :, sl] = (qc * gc.exp()[..., None]) @ state + ((qc @ kc.transpose(-1, -2)) * decay) @ new
        last = gc[..., -1:]  # [B, H, 1]
        state = state * last.exp()[..., None] + (kc * (last - gc).exp()[..., None]).transpose(-1, -2) @ new
    return out


def fla_delta_rule(q, k, v, beta, g=None) -> torch.Tensor:
    """FLA's ``chunk_delta_rule`` (``g is None``) or ``chunk_gated_delta_rule`` with in-kernel q/k
    L2 norm and ``scale=1``; ``beta`` and ``g`` already transformed."""
    if g is None:
        fla_fn, extra = fla_kernel("delta_rule", "chunk_delta_rule", q.device), {}
    else:
        fla_fn = fla_kernel("gated_delta_rule", "chunk_gated_delta_rule", q.device)
        extra = {"g": heads_as_batch(g.float())}
    o, _ = fla_fn(heads_as_batch(q), heads_as_batch(k), heads_as_batch(v), beta=heads_as_batch(beta.float()), **extra,
                  scale=1.0, output_final_state=False, use_qk_l2norm_in_kernel=True)
    return from_heads_as_batch(o, q.shape[0], q.shape[1])


def delta_rule_flops(B: int, H: int, T: int, D: int, **_) -> float:
    """Chunked delta rule per chunk of C = 64: K K^T, T K, T V, Q K^T and A N (2*C*C*D each) plus
    W S, Q S and K^T N (2*C*D*D each): ``2*C*D*(5*C + 3*D)``; masked halves counted."""
    return B * H * -(-T // CHUNK) * 2.0 * CHUNK * D * (5 * CHUNK + 3 * D)
