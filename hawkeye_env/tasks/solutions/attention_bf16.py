"""Expert solution for ``attention_bf16``: attention without a mask, the ``ws_attention_fwd``
unit's warp-specialized Gluon kernel on a Hopper GPU, ``units.online_softmax``'s Triton flash
attention elsewhere.

On CUDA (``attention_or_twin``) the kernel is ``attention_causal_bf16``'s without the mask: a TMA
producer warp, two consumer warpgroups running FlashAttention-3's intra-warpgroup pipeline over
every key block. Judged on the H200 (2026-12-03, ``evals/results/tasks-attn-fma-h200-2026-12-03.json``,
three verdicts): 1.567 ms, 1.04x SDPA-cuDNN, where the Triton kernel (64-key blocks) ran 0.90x.
At S not a multiple of 128, other D and on the CPU the Triton kernel streams all keys in 64-key
blocks with an online softmax in float32, masking only the last, partial key block.
"""

from __future__ import annotations

import torch
from torch import nn

from units.ws_attention_fwd.kernel import attention_or_twin


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        return attention_or_twin(q, k, v, causal=False)
