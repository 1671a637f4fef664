"""Causal grouped-query attention, forward, in bfloat16.

q is bfloat16 ``[B, Hq, S, D]``, k and v bfloat16 ``[B, Hkv, S, D]`` with ``Hq % Hkv == 0``; query
head ``h`` attends with key/value head ``h // (Hq // Hkv)`` (SDPA's ``enable_gqa``). The output is
bfloat16 ``[B, Hq, S, D]`` equal to ``softmax(q k^T / sqrt(D) + causal mask) v``. The reference is
the explicit form (``hawkeye_env.tasks.shared.attention_common.explicit_attention``) in float32 (float64
in the judge's exact run), a few heads at a time.
"""

from __future__ import annotations

import torch
from torch import nn

from hawkeye_env.tasks.shared.attention_common import explicit_attention, reference_dtype, sdpa
from hawkeye_env.tasks.spec import ATTENTION_BF16, DEFAULT_TOLERANCES, TaskSpec, derived_family


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        compute = reference_dtype(q)
        return explicit_attention(q.to(compute), k.to(compute), v.to(compute), causal=True).to(q.dtype)


def get_inputs(B: int = 4, Hq: int = 32, Hkv: int = 8, S: int = 4096, D: int = 128):
    return [torch.randn(B, Hq, S, D, dtype=torch.bfloat16),
            *(torch.randn(B, Hkv, S, D, dtype=torch.bfloat16) for _ in range(2))]


def get_init_inputs(B: int = 4, Hq: int = 32, Hkv: int = 8, S: int = 4096, D: int = 128):
    return []


def sdpa_cudnn(model, q, k, v):
    """cuDNN's fused attention through SDPA (``enable_gqa``)."""
    return sdpa("cudnn", q, k, v, causal=True)


def sdpa_flash(model, q, k, v):
    """FlashAttention-2 through SDPA (``enable_gqa``)."""
    return sdpa("flash", q, k, v, causal=True)


CPU_SHAPES = ({"B": 1, "Hq": 4, "Hkv": 2, "S": 67, "D": 32}, {"B": 2, "Hq": 3, "Hkv": 1, "S": 130, "D": 16})
GPU_SHAPES = ({"B": 4, "Hq": 32, "Hkv": 8, "S": 4096, "D": 128},)

SPEC = TaskSpec(
    id="attention_gqa_bf16",
    family="attention",
    description=(
        "Causal grouped-query attention forward: for bfloat16 q [B, Hq, S, D] and k, v "
        "[B, Hkv, S, D] (Hq a multiple of Hkv) return bfloat16 [B, Hq, S, D] equal to "
        "softmax(q k^T / sqrt(D) with key j > query i masked out) v, where query head h uses "
        "key/value head h // (Hq // Hkv), as F.scaled_dot_product_attention(q, k, v, is_causal=True, "
        "enable_gqa=True). S is arbitrary. Flash attention with the head mapping done in the "
        "index arithmetic (never copy K/V per query head); skip KV blocks above the diagonal."
    ),
    module="hawkeye_env.tasks.attention_gqa_bf16.task",
    dtypes=("bfloat16",),
    cpu_shapes=CPU_SHAPES,
    gpu_shapes=GPU_SHAPES,
    # Causal: half of the two S x S x D matmuls per query head.
    flops=lambda B, Hq, S, D, **_: 2.0 * B * Hq * S * S * D,
    bytes_moved=lambda B, Hq, Hkv, S, D, **_: 2.0 * 2 * B * S * D * (Hq + Hkv),
    tags=("online_softmax", "attention"),
    tolerances={**DEFAULT_TOLERANCES, "bfloat16": ATTENTION_BF16},
    solution="hawkeye_env.tasks.attention_gqa_bf16.solution",
    vendor_baselines={
        "sdpa_cudnn": "hawkeye_env.tasks.attention_gqa_bf16.task:sdpa_cudnn",
        "sdpa_flash": "hawkeye_env.tasks.attention_gqa_bf16.task:sdpa_flash",
    },
    targets={"sdpa_cudnn": 0.9, "sdpa_flash": 1.5},
    layouts=("offset",),
    # Heads vary as the public shapes do, query heads a multiple of the KV heads.
    shape_family=derived_family(CPU_SHAPES, GPU_SHAPES, valid=lambda s: s["Hq"] % s["Hkv"] == 0),
)
