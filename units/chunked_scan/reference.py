"""PyTorch reference of ``chunked_scan``: the simple-GLA recurrence, token by token.

For each (batch, head), with ``S_0 = 0``::

    S_t = exp(g_t) * S_{t-1} + k_t^T v_t        # [D, D] state
    o_t = q_t S_t                               # [D]

which equals ``o_t = sum_{s <= t} exp(G_t - G_s) (q_t . k_s) v_s`` with ``G = cumsum(g)``. No
``1/sqrt(D)`` factor is applied (FLA's ``chunk_simple_gla`` multiplies q by ``scale = D^-0.5`` by
default; this unit's inputs fold that into q). FLA's ``naive_recurrent_simple_gla`` is the same loop;
its chunked PyTorch form (``naive_chunk_simple_gla``) is what the anchors timed as eager and
torch.compile baselines.
"""

from __future__ import annotations

import torch


def simple_gla(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, g: torch.Tensor,
               out_dtype: torch.dtype | None = None) -> torch.Tensor:
    """Recurrent simple GLA forward.

    Args:
        q, k, v: ``[B, H, T, D]`` (any float dtype).
        g: float32 ``[B, H, T]`` log-decay, ``<= 0``.
        out_dtype: dtype of the result (default: bf16, or float64 for float64 q); the recurrence
            runs in float32, or in float64 when the result is float64.

    Returns:
        ``[B, H, T, D]`` in ``out_dtype``.
    """
    out_dtype = _result_dtype(q, out_dtype)
    compute = torch.float64 if out_dtype == torch.float64 else torch.float32
    q, k, v, g = (t.to(compute) for t in (q, k, v, g))
    b, h, t_len, d = q.shape
    state = q.new_zeros(b, h, d, v.shape[-1])
    out = torch.empty_like(v)
    for t in range(t_len):
        state = state * g[:, :, t, None, None].exp() + k[:, :, t, :, None] * v[:, :, t, None, :]
        out[:, :, t] = (q[:, :, t, :, None] * state).sum(-2)
    return out.to(out_dtype)


def _result_dtype(first: torch.Tensor, out_dtype: torch.dtype | None) -> torch.dtype:
    """``out_dtype`` if given, else float64 for float64 inputs (the harness's exact reference), else bf16."""
    if out_dtype is not None:
        return out_dtype
    return torch.float64 if first.dtype == torch.float64 else torch.bfloat16
