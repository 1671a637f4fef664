"""Shared pieces of the attention backward tasks: the forward's saved tensors and the reference
gradients.

A backward task receives what a flash-attention forward saves: its output ``o`` and the
logsumexp ``lse`` of each query row's scaled scores. ``forward_with_lse`` computes both in float32
from the task's q, k, v, so every trial's ``o`` and ``lse`` are the forward of that trial's own
q, k, v. ``attention_grads`` is autograd of ``attention_common.explicit_attention``, one group of
(batch, head) rows at a time so the retained score matrices stay within ``SCORE_BUDGET_BYTES``.
"""

from __future__ import annotations

import torch

from hawkeye_env.tasks.shared.attention_common import SCORE_BUDGET_BYTES, explicit_attention


def _groups(q: torch.Tensor, k: torch.Tensor, live_copies: int):
    """Slices of the flat (batch, head) rows, each holding at most ``SCORE_BUDGET_BYTES`` of
    ``live_copies`` score matrices."""
    rows, s_q, s_k = q.shape[0] * q.shape[1], q.shape[2], k.shape[2]
    step = max(1, SCORE_BUDGET_BYTES // (live_copies * s_q * s_k * q.element_size()))
    return [slice(start, min(start + step, rows)) for start in range(0, rows, step)]


def forward_with_lse(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool):
    """The forward a backward task starts from, in float32.

    Args:
        q, k, v: ``[B, H, S, D]`` (any floating dtype).
        causal: mask key ``j > i`` for query ``i``.

    Returns:
        ``(o, lse)``: ``o`` ``[B, H, S, D]`` in q's dtype, ``lse`` float32 ``[B, H, S]``, the natural
        logsumexp of ``q k^T / sqrt(D)`` over the keys each query sees (SDPA's flash format).
    """
    b, h, s, d = q.shape
    qf, kf, vf = (x.reshape(b * h, s, d).float() for x in (q, k, v))
    o = torch.empty(b * h, s, d, dtype=q.dtype, device=q.device)
    lse = torch.empty(b * h, s, dtype=torch.float32, device=q.device)
    mask = torch.ones(s, s, dtype=torch.bool, device=q.device).tril() if causal else None
    for rows in _groups(qf, kf, live_copies=2):
        scores = (qf[rows] @ kf[rows].transpose(-1, -2)) * d ** -0.5  # [g, S, S]
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        row_lse = torch.logsumexp(scores, dim=-1)  # [g, S]
        o[rows] = ((scores - row_lse[..., None]).exp() @ vf[rows]).to(q.dtype)
        lse[rows] = row_lse
    return o.reshape(b, h, s, d), lse.reshape(b, h, s)


def attention_grads(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, grad_out: torch.Tensor, causal: bool):
    """``(dq, dk, dv)`` of ``explicit_attention(q, k, v, causal)`` for ``grad_out``, in q's dtype.

    Args:
        q, k, v, grad_out: ``[B, H, S, D]``, one floating dtype.
        causal: mask key ``j > i`` for query ``i``.

    Returns:
        Three ``[B, H, S, D]`` tensors in q's dtype.
    """
    b, h, s, d = q.shape
    flat = [x.reshape(b * h, s, d) for x in (q, k, v, grad_out)]
    grads = [torch.empty(b * h, s, d, dtype=q.dtype, device=q.device) for _ in range(3)]
    # Autograd keeps the scores, the softmax and their gradients: about four [g, S, S] copies.
    for rows in _groups(q, k, live_copies=4):
        with torch.enable_grad():
            leaves = [x[rows].detach().requires_grad_() for x in flat[:3]]
            out = explicit_attention(*(x.unsqueeze(0) for x in leaves), causal=causal)
            got = torch.autograd.grad(out, leaves, flat[3][rows].unsqueeze(0))
        for dst, g in zip(grads, got):
            dst[rows] = g
    return tuple(g.reshape(b, h, s, d) for g in grads)


def flash_grads(q, k, v, o, lse, grad_out, causal: bool):
    """``(dq, dk, dv)`` by FlashAttention-2's backward arithmetic, in q's dtype: ``P`` recomputed
    from the saved ``lse``, ``dP = grad_out v^T``, ``dS = P * (dP - delta)`` with ``delta =
    rowsum(o * grad_out)`` from the saved ``o`` (as FlashAttention-2, SDPA's flash and cuDNN
    backward and Triton's fused-attention tutorial compute it); no operand is rounded.

    Args:
        q, k, v, o, grad_out: ``[B, H, S, D]``, one floating dtype (float32 for the native run).
        lse: ``[B, H, S]``, the natural logsumexp of each row's scaled scores.
        causal: mask key ``j > i`` for query ``i``.

    Returns:
        Three ``[B, H, S, D]`` tensors in q's dtype.
    """
    b, h, s, d = q.shape
    qf, kf, vf, of, dof = (x.reshape(b * h, s, d) for x in (q, k, v, o, grad_out))
    lse_f = lse.reshape(b * h, s).to(q.dtype)
    grads = [torch.empty(b * h, s, d, dtype=q.dtype, device=q.device) for _ in range(3)]
    mask = torch.ones(s, s, dtype=torch.bool, device=q.device).tril() if causal else None
    for rows in _groups(qf, kf, live_copies=3):
        p = ((qf[rows] @ kf[rows].transpose(-1, -2)) * d ** -0.5 - lse_f[rows, :, None]).exp()  # [g, S, S]
        if mask is not None:
            p = p.masked_fill(~mask, 0.0)
        delta = (of[rows] * dof[rows]).sum(-1, keepdim=True)  # [g, S, 1]
        ds = p * (dof[rows] @ vf[rows].transpose(-1, -2) - delta)  # [g, S, S]
        grads[0][rows] = (ds @ kf[rows]) * d ** -0.5
        grads[1][rows] = (ds.transpose(-1, -2) @ qf[rows]) * d ** -0.5
        grads[2][rows] = p.transpose(-1, -2) @ dof[rows]
    return tuple(g.reshape(b, h, s, d) for g in grads)
