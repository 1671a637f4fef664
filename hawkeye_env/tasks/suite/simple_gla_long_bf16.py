"""Simple gated linear attention at a long sequence (T = 32768), forward.

The function, reference and expert solution are those of ``simple_gla_fwd_bf16`` (scalar decay
per token and head, ``g = logsigmoid(gate + 4)``, no ``1/sqrt(D)``); only the shapes differ: one
sequence of 32768 tokens and 16 heads, so a kernel that walks the sequence in one program per head
and value block has few programs (32 at D = 128, BV = 64) each walking 512 chunks, and the carried
state must stay exact over the whole length.
"""

from __future__ import annotations

import torch

from hawkeye_env.tasks.spec import DEFAULT_TOLERANCES, LINEAR_ATTENTION_BF16, TaskSpec
from hawkeye_env.tasks.suite import simple_gla_fwd_bf16 as short

Model = short.Model
fla = short.fla


def get_inputs(B: int = 1, H: int = 16, T: int = 32768, D: int = 128):
    return [
        *(torch.randn(B, H, T, D, dtype=torch.bfloat16) for _ in range(3)),
        torch.randn(B, H, T, dtype=torch.float32),
    ]


def get_init_inputs(B: int = 1, H: int = 16, T: int = 32768, D: int = 128):
    return []


SPEC = TaskSpec(
    id="simple_gla_long_bf16",
    family="linear_attention",
    description=(
        "Simple GLA forward at a long sequence: for bfloat16 q, k, v [B, H, T, D] and a float32 raw "
        "gate [B, H, T], let g = logsigmoid(gate + 4) (log-decay, <= 0) and G = cumsum(g) over T; "
        "return bfloat16 [B, H, T, D] with o_t = sum_{s<=t} exp(G_t - G_s) (q_t . k_s) v_s (no "
        "1/sqrt(D) scale). Timed at B=1, H=16, T=32768: a sequential walk over chunks has little "
        "parallelism, so consider computing every chunk's state first and the outputs in parallel "
        "over chunks. Keep decays relative to each chunk's start (a global cumsum underflows)."
    ),
    module="hawkeye_env.tasks.suite.simple_gla_long_bf16",
    dtypes=("bfloat16", "float32"),
    cpu_shapes=({"B": 1, "H": 2, "T": 333, "D": 16}, {"B": 1, "H": 1, "T": 200, "D": 32}),
    gpu_shapes=({"B": 1, "H": 16, "T": 32768, "D": 128},),
    flops=short.chunked_flops,
    bytes_moved=short.SPEC.bytes_moved,
    tags=("chunked_scan", "linear_attention"),
    tolerances={**DEFAULT_TOLERANCES, "bfloat16": LINEAR_ATTENTION_BF16},
    solution="hawkeye_env.tasks.solutions.simple_gla_fwd_bf16",
    vendor_baselines={"fla": "hawkeye_env.tasks.suite.simple_gla_long_bf16:fla"},
    targets={"fla": 1.0, "compile": 18.9},
)
