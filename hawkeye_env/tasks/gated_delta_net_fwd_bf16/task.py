"""Gated DeltaNet forward: the delta rule with a scalar decay per token and head.

For q, k, v bfloat16 ``[B, H, T, D]`` and raw ``beta``, ``gate`` float32 ``[B, H, T]``: ``q, k`` are
L2-normalised along D (``x / sqrt(sum x^2 + 1e-6)``), ``b = sigmoid(beta)``, the log-decay is
``g = logsigmoid(gate + GATE_BIAS)``, and per (batch, head), from ``S_0 = 0``::

    S_t = exp(g_t) (I - b_t k_t^T k_t) S_{t-1} + b_t k_t^T v_t,    o_t = q_t S_t

(no ``1/sqrt(D)``). Output bfloat16 ``[B, H, T, D]``. ``GATE_BIAS = 4`` as in
``simple_gla_fwd_bf16``: mean decay near 0.02 per token for unit-scale gates. The reference is the
chunked WY form of ``hawkeye_env.tasks.shared.delta_rule_common`` in float32 (float64 in the judge's exact
run).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from hawkeye_env.tasks.shared.delta_rule_common import (
    chunked_delta_rule,
    delta_rule_flops,
    fla_delta_rule,
    l2norm,
)
from hawkeye_env.tasks.spec import DEFAULT_TOLERANCES, DELTA_RULE_BF16, TaskSpec

GATE_BIAS = 4.0


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, beta: torch.Tensor,
                gate: torch.Tensor) -> torch.Tensor:
        compute = torch.float64 if q.dtype == torch.float64 else torch.float32
        qc, kc, vc, bc, gc = (x.to(compute) for x in (q, k, v, beta, gate))
        g = F.logsigmoid(gc + GATE_BIAS)
        return chunked_delta_rule(l2norm(qc), l2norm(kc), vc, torch.sigmoid(bc), g).to(q.dtype)


def get_inputs(B: int = 8, H: int = 16, T: int = 2048, D: int = 128):
    return [
        *(torch.randn(B, H, T, D, dtype=torch.bfloat16) for _ in range(3)),
        *(torch.randn(B, H, T, dtype=torch.float32) for _ in range(2)),
    ]


def get_init_inputs(B: int = 8, H: int = 16, T: int = 2048, D: int = 128):
    return []


def fla(model, q, k, v, beta, gate):
    """FLA's ``chunk_gated_delta_rule`` (q/k L2 norm in the kernel, ``scale=1``)."""
    return fla_delta_rule(q, k, v, torch.sigmoid(beta.float()), F.logsigmoid(gate.float() + GATE_BIAS))


SPEC = TaskSpec(
    id="gated_delta_net_fwd_bf16",
    family="linear_attention",
    description=(
        "Gated DeltaNet forward: for bfloat16 q, k, v [B, H, T, D] and float32 raw beta, gate "
        "[B, H, T], L2-normalise q and k along D (x / sqrt(sum x^2 + 1e-6)), let b = sigmoid(beta) "
        "and g = logsigmoid(gate + 4), and return bfloat16 [B, H, T, D] with o_t = q_t S_t where "
        "S_0 = 0 and S_t = exp(g_t) (I - b_t k_t^T k_t) S_{t-1} + b_t k_t^T v_t (no 1/sqrt(D) "
        "scale). T is arbitrary. Use the chunked WY form with chunk-local cumulative decays G: "
        "A = strictly_lower(diag(b) (K K^T * exp(G_i - G_j))), T = (I + A)^-1 diag(b), "
        "W = T (K * exp(G)), U = T V; then N = U - W S, O = (Q * exp(G)) S + "
        "lower(Q K^T * exp(G_i - G_j)) N, S = exp(G_last) S + (K * exp(G_last - G))^T N."
    ),
    module="hawkeye_env.tasks.gated_delta_net_fwd_bf16.task",
    dtypes=("bfloat16", "float32"),
    cpu_shapes=({"B": 1, "H": 2, "T": 67, "D": 32}, {"B": 2, "H": 1, "T": 130, "D": 16}),
    gpu_shapes=({"B": 8, "H": 16, "T": 2048, "D": 128},),
    flops=delta_rule_flops,
    bytes_moved=lambda B, H, T, D, **_: 2.0 * 4 * B * H * T * D + 2 * 4.0 * B * H * T,
    tolerances={**DEFAULT_TOLERANCES, "bfloat16": DELTA_RULE_BF16},
    tags=("chunked_scan", "linear_attention"),
    solution="hawkeye_env.tasks.gated_delta_net_fwd_bf16.solution",
    vendor_baselines={"fla": "hawkeye_env.tasks.gated_delta_net_fwd_bf16.task:fla"},
    targets={"fla": 1.0, "compile": 18.9},
    layouts=("offset",),
)
