"""Expert solution for ``attention_bf16``: attention without a mask, the ``ws_attention_fwd``
unit's warp-specialized Gluon kernel on a Hopper GPU, ``units.online_softmax``'s Triton flash
attention elsewhere.

On CUDA (``attention_or_twin``) the kernel is ``attention_causal_bf16``'s without the mask: a TMA
producer warp, two consumer warpgroups running FlashAttention-3's intra-warpgroup pipeline over
every key block (its time against SDPA-cuDNN: BENCHMARKS.md, Task suite against the vendors).
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
