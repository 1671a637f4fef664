"""PyTorch reference of ``ws_attention_fwd``: causal softmax attention with grouped-query heads.

Written out (scores, mask, softmax, product) rather than through SDPA so it runs in float64 on the
CPU (the harness's exact reference) as well as in bfloat16 on the GPU (computed in float32 there).
"""

from __future__ import annotations

import math

import torch


def attention_causal(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """``softmax(q k^T / sqrt(D) + causal mask) v`` for q ``[B, H, S, D]``, k and v ``[B, HKV, S, D]``.

    Query head ``h`` attends with KV head ``h // (H // HKV)``; the result has q's shape and dtype.
    """
    work = torch.float64 if q.dtype == torch.float64 else torch.float32
    group = q.shape[1] // k.shape[1]
    s = q.shape[2]
    visible = torch.ones(s, s, dtype=torch.bool, device=q.device).tril()
    k, v = k.repeat_interleave(group, 1), v.repeat_interleave(group, 1)
    out = torch.empty_like(q)
    for i in range(q.shape[0]):  # one batch entry at a time: [H, S, S] scores (4 GiB in float64 at H32 S4096)
        qi, ki, vi = (t[i].to(work) for t in (q, k, v))
        scores = (qi @ ki.transpose(-1, -2) / math.sqrt(q.shape[3])).masked_fill(~visible, float("-inf"))
        out[i] = torch.softmax(scores, dim=-1) @ vi
    return out
