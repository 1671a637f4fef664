"""``ws_attention_fwd`` without the strategy: ``units.online_softmax``'s Triton flash attention.

The same algorithm (128-query tiles, 128-key blocks, online softmax in float32 with ``exp2``, TMA
descriptor loads, the causal loop split into unmasked and diagonal blocks, longest rows first) in
the Triton language at its measured configuration (8 warps, 3 stages): every warp both loads and
computes and the software pipeliner overlaps them inside one instruction stream; Triton 3.6 leaves
that loop unsplit on sm_90 even with ``warp_specialize=True`` (units/warp_specialization README).
It runs under the Triton interpreter, so it is also the unit's CPU twin.

Inputs as the solution: q ``[B, H, S, D]``, k and v ``[B, HKV, S, D]`` bfloat16; output like q.
"""

from __future__ import annotations

import torch

from units.online_softmax.attention import flash_attention


def attention_causal(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """``softmax(q k^T / sqrt(D) + causal mask) v`` through the Triton-language kernel."""
    return flash_attention(q, k, v, causal=True)
