"""Single-token attention decode against a KV cache, in bfloat16.

q is bfloat16 ``[B, Hq, 1, D]`` (one new token per sequence), k and v the bfloat16 cache
``[B, Hkv, L, D]`` with ``Hq % Hkv == 0`` (query head ``h`` reads cache head ``h // (Hq // Hkv)``).
The output is bfloat16 ``[B, Hq, 1, D]`` equal to ``softmax(q k^T / sqrt(D)) v`` over all L cached
keys (no mask: the new token sees the whole cache). The reference is the explicit form
(``hawkeye_env.tasks.shared.attention_common.explicit_attention``) in float32 (float64 in the judge's
exact run); its scores are only ``[B, Hq, 1, L]``.
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
        return explicit_attention(q.to(compute), k.to(compute), v.to(compute), causal=False).to(q.dtype)


def get_inputs(B: int = 16, Hq: int = 32, Hkv: int = 8, L: int = 8192, D: int = 128):
    return [torch.randn(B, Hq, 1, D, dtype=torch.bfloat16),
            *(torch.randn(B, Hkv, L, D, dtype=torch.bfloat16) for _ in range(2))]


def get_init_inputs(B: int = 16, Hq: int = 32, Hkv: int = 8, L: int = 8192, D: int = 128):
    return []


def sdpa_cudnn(model, q, k, v):
    """cuDNN's fused attention through SDPA (``enable_gqa``)."""
    return sdpa("cudnn", q, k, v, causal=False)


def sdpa_flash(model, q, k, v):
    """FlashAttention-2 through SDPA (``enable_gqa``)."""
    return sdpa("flash", q, k, v, causal=False)


CPU_SHAPES = ({"B": 2, "Hq": 4, "Hkv": 2, "L": 67, "D": 32}, {"B": 1, "Hq": 6, "Hkv": 2, "L": 300, "D": 16})
GPU_SHAPES = ({"B": 16, "Hq": 32, "Hkv": 8, "L": 8192, "D": 128},)

SPEC = TaskSpec(
    id="attention_decode_bf16",
    family="attention",
    description=(
        "Attention decode: for bfloat16 q [B, Hq, 1, D] and a bfloat16 KV cache k, v [B, Hkv, L, D] "
        "(Hq a multiple of Hkv; query head h reads cache head h // (Hq // Hkv)) return bfloat16 "
        "[B, Hq, 1, D] equal to softmax(q k^T / sqrt(D)) v over all L keys, as "
        "F.scaled_dot_product_attention(q, k, v, enable_gqa=True). L is arbitrary. Memory bound: "
        "read each cached key and value once for all query heads of its group, and split L across "
        "programs (flash decoding), merging the partial softmaxes by their running max and sum."
    ),
    module="hawkeye_env.tasks.attention_decode_bf16.task",
    dtypes=("bfloat16",),
    cpu_shapes=CPU_SHAPES,
    gpu_shapes=GPU_SHAPES,
    flops=lambda B, Hq, L, D, **_: 4.0 * B * Hq * L * D,
    # The cache dominates: K and V once, plus q and the output.
    bytes_moved=lambda B, Hq, Hkv, L, D, **_: 2.0 * (2 * B * Hkv * L * D + 2 * B * Hq * D),
    tags=("online_softmax", "attention", "split_k"),
    tolerances={**DEFAULT_TOLERANCES, "bfloat16": ATTENTION_BF16},
    solution="hawkeye_env.tasks.attention_decode_bf16.solution",
    vendor_baselines={
        "sdpa_cudnn": "hawkeye_env.tasks.attention_decode_bf16.task:sdpa_cudnn",
        "sdpa_flash": "hawkeye_env.tasks.attention_decode_bf16.task:sdpa_flash",
    },
    targets={"sdpa_flash": 1.0},
    layouts=("offset",),
    # Heads vary as the public shapes do, query heads a multiple of the KV heads.
    shape_family=derived_family(CPU_SHAPES, GPU_SHAPES, valid=lambda s: s["Hq"] % s["Hkv"] == 0),
)
