"""Expert solution for ``attention_gqa_bf16``: causal attention with grouped KV heads, the
``ws_attention_fwd`` unit's warp-specialized Gluon kernel on a Hopper GPU, ``units.online_softmax``'s
Triton flash attention elsewhere.

Query head ``h`` reads key/value head ``h // (Hq // Hkv)`` through the TMA coordinates, so K and V
are never copied per query head (the query heads of a KV head hit the same K/V lines in L2). On
CUDA (``attention_or_twin``) the kernel is ``attention_causal_bf16``'s: a TMA producer warp, two
consumer warpgroups running FlashAttention-3's intra-warpgroup pipeline, KV blocks above the
diagonal skipped (its time against SDPA-cuDNN with ``enable_gqa``: BENCHMARKS.md, Task suite
against the vendors). At S not a multiple of 128, other D and on the CPU the Triton kernel computes the same maths.
"""

from __future__ import annotations

import torch
from torch import nn

from units.ws_attention_fwd.kernel import attention_or_twin


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        return attention_or_twin(q, k, v, causal=True)
