"""Simple gated linear attention (scalar decay per token and head), backward.

The forward is ``simple_gla_fwd_bf16``'s: ``o_t = sum_{s <= t} exp(G_t - G_s) (q_t . k_s) v_s``
with ``G = cumsum(g)`` along T and ``g = logsigmoid(gate + GATE_BIAS)``, for q, k, v bfloat16
``[B, H, T, D]`` and a raw gate float32 ``[B, H, T]``. Given those inputs and ``grad_out``
bfloat16 ``[B, H, T, D]`` (the gradient of ``o``), the task returns ``(dq, dk, dv, dgate)``:
bfloat16 ``[B, H, T, D]`` for q, k, v and float32 ``[B, H, T]`` for the raw gate.

The reference is autograd of the forward's chunked reference (``simple_gla_reference``) in
float32 (float64 in the judge's exact run).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from hawkeye_env.tasks.shared.fla_baselines import fla_kernel, from_heads_as_batch, heads_as_batch
from hawkeye_env.tasks.simple_gla_fwd_bf16.task import CHUNK, GATE_BIAS, simple_gla_reference
from hawkeye_env.tasks.spec import DEFAULT_TOLERANCES, LINEAR_ATTENTION_BF16, TaskSpec, Tolerance


class Model(nn.Module):
    """``(dq, dk, dv, dgate)`` by autograd of the chunked forward in float32 (float64 when q is
    float64); dq, dk, dv in q's dtype, dgate in the gate's."""

    def __init__(self):
        super().__init__()

    def forward(self, q, k, v, gate, grad_out):
        compute = torch.float64 if q.dtype == torch.float64 else torch.float32
        with torch.enable_grad():
            leaves = [x.detach().to(compute).requires_grad_() for x in (q, k, v, gate)]
            q_, k_, v_, gate_ = leaves
            out = simple_gla_reference(q_, k_, v_, F.logsigmoid(gate_ + GATE_BIAS))
            grads = torch.autograd.grad(out, leaves, grad_out.to(compute))
        return tuple(g.to(x.dtype) for g, x in zip(grads, (q, k, v, gate)))


def get_inputs(B: int = 8, H: int = 16, T: int = 2048, D: int = 128):
    return [
        *(torch.randn(B, H, T, D, dtype=torch.bfloat16) for _ in range(3)),
        torch.randn(B, H, T, dtype=torch.float32),
        torch.randn(B, H, T, D, dtype=torch.bfloat16),
    ]


def get_init_inputs(B: int = 8, H: int = 16, T: int = 2048, D: int = 128):
    return []


def fla(model, q, k, v, gate, grad_out):
    """FLA's ``chunk_simple_gla`` backward through its autograd function, on the same log-decay with
    ``scale=1``. FLA has no public backward-only entry, so the time includes its chunked forward
    (which the backward's state recomputation repeats) and the two elementwise torch ops of the
    log-decay and its chain rule to the raw gate."""
    chunk_simple_gla = fla_kernel("simple_gla", "chunk_simple_gla", q.device)
    with torch.enable_grad():
        leaves = [heads_as_batch(x).detach().requires_grad_() for x in (q, k, v)]
        gate_leaf = gate.detach().requires_grad_()
        g = heads_as_batch(F.logsigmoid(gate_leaf + GATE_BIAS))
        o, _ = chunk_simple_gla(*leaves, g=g, scale=1.0, output_final_state=False)
        grads = torch.autograd.grad(o, [*leaves, gate_leaf], heads_as_batch(grad_out))
    b, h = q.shape[:2]
    return (*(from_heads_as_batch(x, b, h) for x in grads[:3]), grads[3])


def chunked_flops(B: int, H: int, T: int, D: int, **_) -> float:
    """Per chunk of 64 tokens, the ten products a chunked backward needs (2 flops each): five
    C x C x D (q k^T, dO v^T, and applying them for dq, dk and dv) and five C x D x D (the state
    recomputed, dO S^T, the state gradient's update, and applying it for dk and dv)."""
    return B * H * -(-T // CHUNK) * 10.0 * CHUNK * D * (CHUNK + D)


# The raw gate's gradient (float32) sums ``q . dq - k . dk`` over every later token, so it carries
# the bf16 rounding of the MMA operands behind dq and dk, where the two terms nearly cancel: the
# expert (bf16 operands, float32 accumulation) measured rel L2 up to 5.7e-3 (dq, dk, dv: up to
# 2.7e-3) at both CPU shapes, normal, uniform, heavy-tailed, zeros and repeated inputs, 3 seeds
# each (CPU interpreter, 2026-12-05). rel_l2 = 1.2e-2 keeps 2x headroom over that and still rejects
# fp8 operands (~3.6e-2, as DELTA_RULE_BF16); element bound and worst element as
# LINEAR_ATTENTION_BF16, whose bf16 outputs come from the same MMAs.
GATE_GRAD_FP32 = Tolerance(
    rtol=0.1, atol=0.1, rel_l2=1.2e-2, worst_floor=2.5,
    source="float32 gate gradient from bf16-operand MMAs: rel L2 <= 5.7e-3 (expert, CPU shapes, "
           "5 distributions x 3 seeds); element bound as LINEAR_ATTENTION_BF16; fp8 (~3.6e-2) must fail",
)

SPEC = TaskSpec(
    id="simple_gla_bwd_bf16",
    family="linear_attention",
    description=(
        "Simple GLA backward: the forward takes bfloat16 q, k, v [B, H, T, D] and a float32 raw gate "
        "[B, H, T], lets g = logsigmoid(gate + 4) and G = cumsum(g) over T, and returns o_t = "
        "sum_{s<=t} exp(G_t - G_s) (q_t . k_s) v_s (no 1/sqrt(D) scale). Given q, k, v, gate and "
        "grad_out (bfloat16 [B, H, T, D], the gradient of o), return (dq, dk, dv, dgate): bfloat16 "
        "[B, H, T, D] for q, k, v and float32 [B, H, T] for the gate. T is arbitrary. Use the chunked "
        "form: a forward walk over chunks for dq with the carried [D, D] state, a reverse walk for dk "
        "and dv with the state's gradient, tensor-core matmuls inside a chunk, float32 across; "
        "dG_t = q_t . dq_t - k_t . dk_t, and dgate is its reverse cumulative sum times "
        "sigmoid(-(gate + 4))."
    ),
    module="hawkeye_env.tasks.simple_gla_bwd_bf16.task",
    dtypes=("bfloat16", "float32"),
    cpu_shapes=({"B": 1, "H": 2, "T": 67, "D": 16}, {"B": 2, "H": 1, "T": 130, "D": 32}),
    gpu_shapes=({"B": 8, "H": 16, "T": 2048, "D": 128},),
    flops=chunked_flops,
    # Read q, k, v, grad_out and the gate; write dq, dk, dv and dgate.
    bytes_moved=lambda B, H, T, D, **_: 2.0 * 7 * B * H * T * D + 8.0 * B * H * T,
    tags=("chunked_scan", "linear_attention"),
    tolerances={**DEFAULT_TOLERANCES, "bfloat16": LINEAR_ATTENTION_BF16, "float32": GATE_GRAD_FP32},
    solution="hawkeye_env.tasks.simple_gla_bwd_bf16.solution",
    vendor_baselines={"fla": "hawkeye_env.tasks.simple_gla_bwd_bf16.task:fla"},
    layouts=("offset",),
)
