"""Expert solution for ``attention_causal_bf16``: the ``ws_attention_fwd`` unit's warp-specialized
Gluon kernel on a Hopper GPU, ``units.online_softmax``'s Triton flash attention elsewhere.

On CUDA (``attention_or_twin``): one TMA producer warp streams K and V through an mbarrier ring;
two consumer warpgroups of 64 query rows each run FlashAttention-3's intra-warpgroup pipeline
(block j's ``Q K^T`` and block j-1's ``P V`` issued together on wgmma, block j's online softmax in
float32 registers while that ``P V`` computes, P fed to wgmma from registers); KV blocks above the
diagonal are skipped, only the diagonal block is masked, the longest rows are scheduled first
(``units/ws_attention_fwd/README.md``; its time against SDPA-cuDNN and SDPA-flash: BENCHMARKS.md,
Task suite against the vendors). The Gluon kernel needs S a multiple
of 128 and D 64 or 128, and Gluon has no interpreter, so at other shapes and on the CPU the Triton
kernel (128x128 tiles, the same skipping and masking) computes the same maths.
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
