"""Shared pieces of the softmax-attention tasks: the explicit reference and the SDPA baselines.

``explicit_attention`` is plain PyTorch (matmul, mask, softmax, matmul), so the task's eager
``Model`` is the naive baseline and the judge's float64 run of the same code is the exact reference.
``sdpa`` runs ``F.scaled_dot_product_attention`` with one back-end forced (cuDNN or FlashAttention)
for the tasks' ``vendor_baselines``.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from hawkeye_env.tasks.spec import BaselineUnavailable

# Bytes of one group's [g, Sq, Sk] score matrix. The reference loops over (batch, head) groups so
# the scores of all heads never coexist: at B4 H32 S4096 they would take 16 GiB in float64 (the
# judge's exact run on the GPU), three times that with the softmax's temporaries. 1 GiB per group
# keeps the peak near 4 GiB in any dtype; eager runs 8 (float64) or 16 (float32) heads per step.
SCORE_BUDGET_BYTES = 1 << 30


def explicit_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool) -> torch.Tensor:
    """``softmax(q k^T / sqrt(D) [+ causal mask]) v`` in q's dtype, with grouped-query heads.

    Args:
        q: ``[B, Hq, Sq, D]``; k, v: ``[B, Hkv, Sk, D]`` with ``Hq % Hkv == 0`` (query head ``h``
            reads key/value head ``h // (Hq // Hkv)``, as SDPA's ``enable_gqa``).
        causal: mask key ``j > i`` for query ``i`` (needs ``Sq == Sk``).

    Returns:
        ``[B, Hq, Sq, D]`` in q's dtype.
    """
    b, hq, sq, d = q.shape
    hkv, sk = k.shape[1], k.shape[2]
    group = hq // hkv
    qf, kf, vf = q.reshape(b * hq, sq, d), k.reshape(b * hkv, sk, d), v.reshape(b * hkv, sk, d)
    out = torch.empty_like(qf)
    step = max(1, SCORE_BUDGET_BYTES // (sq * sk * q.element_size()))
    mask = torch.ones(sq, sk, dtype=torch.bool, device=q.device).tril() if causal else None
    for start in range(0, b * hq, step):
        rows = torch.arange(start, min(start + step, b * hq), device=q.device)  # flat (batch, q head)
        kv_rows = (rows // hq) * hkv + (rows % hq) // group
        scores = (qf[rows] @ kf[kv_rows].transpose(-1, -2)) * d ** -0.5  # [g, Sq, Sk]
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        out[rows] = torch.softmax(scores, dim=-1) @ vf[kv_rows]
    return out.reshape(b, hq, sq, d)


def reference_dtype(x: torch.Tensor) -> torch.dtype:
    """float64 for the judge's exact run, float32 otherwise (bf16 scores and probabilities would
    cost ~2^-9 each, too close to the bf16 tolerance for a reference)."""
    return torch.float64 if x.dtype == torch.float64 else torch.float32


def sdpa(backend: str, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool) -> torch.Tensor:
    """SDPA with only ``backend`` (``"cudnn"`` or ``"flash"``) allowed; grouped heads go through
    ``enable_gqa``. Raises ``BaselineUnavailable`` off CUDA or when the back-end refuses the call."""
    from torch.nn.attention import SDPBackend, sdpa_kernel

    chosen = {"cudnn": SDPBackend.CUDNN_ATTENTION, "flash": SDPBackend.FLASH_ATTENTION}[backend]
    if q.device.type != "cuda":
        raise BaselineUnavailable(f"SDPA {backend} attention needs a CUDA device, got {q.device.type}")
    gqa = q.shape[1] != k.shape[1]
    try:
        with sdpa_kernel(chosen):
            if gqa:
                return F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=True)
            return F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    except RuntimeError as exc:
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise BaselineUnavailable(f"SDPA {backend} back-end refused {tuple(q.shape)} x {tuple(k.shape)} "
                                  f"{q.dtype} (causal={causal}): {reason}") from None
