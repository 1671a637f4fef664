"""Expert Triton solution for ``cross_entropy_fp32``: per-row loss over a large vocabulary.

One program per row streams the row in ``BLOCK_V`` chunks with an online max and rescaled sum of
exponentials (the ``online_softmax`` unit's recurrence), so the row is read from DRAM exactly once;
the target logit is one scalar load. ``loss = log(sum) + max - logits[target]``.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl
from torch import nn

# 4096 fp32 = 16 KiB per chunk: 32 chunks per 128256-wide row; the only chunk size timed (at M=4096,
# V=128256 against the copy bandwidth: BENCHMARKS.md, Task suite against the vendors).
BLOCK_V = 4096


@triton.jit
def _cross_entropy_kernel(logits_ptr, targets_ptr, loss_ptr, n_cols, stride_lm, stride_lv, stride_t,
                          BLOCK_V: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    p_row = logits_ptr + row * stride_lm
    offs = tl.arange(0, BLOCK_V)  # [BLOCK_V]
    m_i = tl.full((BLOCK_V,), float("-inf"), tl.float32)  # running max per lane
    s_i = tl.zeros((BLOCK_V,), tl.float32)  # running sum of exp(x - m_i) per lane
    for start in range(0, n_cols, BLOCK_V):
        cols = start + offs
        x = tl.load(p_row + cols * stride_lv, mask=cols < n_cols, other=float("-inf"))
        m_new = tl.maximum(m_i, x)
        alpha = tl.where(m_new == float("-inf"), 0.0, tl.exp(m_i - m_new))
        s_i = s_i * alpha + tl.where(x == float("-inf"), 0.0, tl.exp(x - m_new))
        m_i = m_new
    m = tl.max(m_i, axis=0)
    s = tl.sum(tl.where(m_i == float("-inf"), 0.0, s_i * tl.exp(m_i - m)), axis=0)
    target = tl.load(targets_ptr + row * stride_t)
    x_t = tl.load(p_row + target * stride_lv)
    tl.store(loss_ptr + row, tl.log(s) + m - x_t)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        m, v = logits.shape
        loss = torch.empty((m,), dtype=torch.float32, device=logits.device)
        block_v = min(BLOCK_V, triton.next_power_of_2(v))
        _cross_entropy_kernel[(m,)](
            logits, targets, loss, v, logits.stride(0), logits.stride(1), targets.stride(0),
            BLOCK_V=block_v, num_warps=8,
        )
        return loss
