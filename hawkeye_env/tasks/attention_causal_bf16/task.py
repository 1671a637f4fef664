"""Causal softmax attention, forward: ``softmax(q k^T / sqrt(D) + causal mask) v`` in bfloat16.

q, k, v are bfloat16 ``[B, H, S, D]``; the output is bfloat16 ``[B, H, S, D]``. The reference is
``F.scaled_dot_product_attention(q, k, v, is_causal=True)`` (scale ``1/sqrt(D)``).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from hawkeye_env.tasks.shared.attention_common import sdpa
from hawkeye_env.tasks.spec import ATTENTION_BF16, DEFAULT_TOLERANCES, TaskSpec


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)


def get_inputs(B: int = 4, H: int = 32, S: int = 4096, D: int = 128):
    return [torch.randn(B, H, S, D, dtype=torch.bfloat16) for _ in range(3)]


def get_init_inputs(B: int = 4, H: int = 32, S: int = 4096, D: int = 128):
    return []


def sdpa_cudnn(model, q, k, v):
    """cuDNN's fused attention through SDPA."""
    return sdpa("cudnn", q, k, v, causal=True)


def sdpa_flash(model, q, k, v):
    """FlashAttention-2 through SDPA."""
    return sdpa("flash", q, k, v, causal=True)


SPEC = TaskSpec(
    id="attention_causal_bf16",
    family="attention",
    description=(
        "Causal attention forward: for bfloat16 q, k, v [B, H, S, D] return bfloat16 [B, H, S, D] "
        "equal to softmax(q k^T / sqrt(D) with key j > query i masked out) v, as "
        "F.scaled_dot_product_attention(q, k, v, is_causal=True). S is arbitrary. Never "
        "materialise the [S, S] scores: stream KV blocks with an online softmax in float32 "
        "(flash attention) and skip KV blocks entirely above the diagonal."
    ),
    module="hawkeye_env.tasks.attention_causal_bf16.task",
    dtypes=("bfloat16",),
    cpu_shapes=({"B": 1, "H": 2, "S": 67, "D": 16}, {"B": 2, "H": 1, "S": 130, "D": 32}),
    gpu_shapes=({"B": 4, "H": 32, "S": 4096, "D": 128},),
    # Causal: half of the two S x S x D matmuls.
    flops=lambda B, H, S, D, **_: 2.0 * B * H * S * S * D,
    bytes_moved=lambda B, H, S, D, **_: 2.0 * 4 * B * H * S * D,
    tags=("online_softmax", "attention"),
    tolerances={**DEFAULT_TOLERANCES, "bfloat16": ATTENTION_BF16},
    solution="hawkeye_env.tasks.attention_causal_bf16.solution",
    vendor_baselines={
        "sdpa_cudnn": "hawkeye_env.tasks.attention_causal_bf16.task:sdpa_cudnn",
        "sdpa_flash": "hawkeye_env.tasks.attention_causal_bf16.task:sdpa_flash",
    },
    targets={"sdpa_cudnn": 0.9, "sdpa_flash": 1.5},
    layouts=("offset",),
)
