"""Simple gated linear attention (scalar decay per token and head), forward.

``o_t = sum_{s <= t} exp(G_t - G_s) (q_t . k_s) v_s`` with ``G = cumsum(g)`` along T, for q, k, v
bfloat16 ``[B, H, T, D]``; output bfloat16 ``[B, H, T, D]``. No ``1/sqrt(D)`` factor is applied.

The decay enters as a raw gate ``gate`` float32 ``[B, H, T]``; the log-decay is
``g = logsigmoid(gate + GATE_BIAS)``, which is ``<= 0`` for any real gate, so every input the judge
redraws (normal, uniform, heavy-tailed) is a valid problem. ``GATE_BIAS = 4`` puts the mean decay
near 0.02 per token for unit-scale gates, so the carried state matters across several chunks.

The reference runs the chunked form in float32 (float64 when the judge evaluates it exactly),
64 tokens per chunk with a carried ``[D, D]`` state, so its memory stays linear in T.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from hawkeye_env.tasks.shared.fla_baselines import fla_kernel, from_heads_as_batch, heads_as_batch
from hawkeye_env.tasks.spec import DEFAULT_TOLERANCES, LINEAR_ATTENTION_BF16, TaskSpec

GATE_BIAS = 4.0
CHUNK = 64


def simple_gla_reference(q, k, v, g) -> torch.Tensor:
    """Chunked simple GLA in ``q``'s dtype; ``g`` is the log-decay ``[B, H, T]``."""
    b, h, t_len, d = q.shape
    state = q.new_zeros(b, h, d, v.shape[-1])
    out = torch.empty_like(v)
    for start in range(0, t_len, CHUNK):
        sl = slice(start, min(start + CHUNK, t_len))
        qc, kc, vc = q[:, :, sl], k[:, :, sl], v[:, :, sl]
        gc = g[:, :, sl].cumsum(-1)  # [B, H, C] chunk-local cumulative log-decay
        c = gc.shape[-1]
        causal = torch.ones(c, c, dtype=torch.bool, device=q.device).tril()
        decay = (gc[..., :, None] - gc[..., None, :]).masked_fill(~causal, float("-inf")).exp()
        out[:, :, sl] = (qc @ state) * gc.exp()[..., None] + ((qc @ kc.transpose(-1, -2)) * decay) @ vc
        last = gc[..., -1:]  # [B, H, 1]
        state = state * last.exp()[..., None] + kc.transpose(-1, -2) @ (vc * (last - gc).exp()[..., None])
    return out


class Model(nn.Module):
    """bfloat16 q, k, v ``[B, H, T, D]`` and float32 raw gate ``[B, H, T]`` -> q's dtype
    ``[B, H, T, D]``, computed by ``chunked`` in float32 (float64 when q is float64) with
    ``g = logsigmoid(gate + GATE_BIAS)``."""

    chunked = staticmethod(simple_gla_reference)

    def __init__(self):
        super().__init__()

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, gate: torch.Tensor) -> torch.Tensor:
        compute = torch.float64 if q.dtype == torch.float64 else torch.float32
        g = F.logsigmoid(gate.to(compute) + GATE_BIAS)
        o = self.chunked(q.to(compute), k.to(compute), v.to(compute), g)
        return o.to(q.dtype)


def get_inputs(B: int = 8, H: int = 16, T: int = 2048, D: int = 128):
    return [
        *(torch.randn(B, H, T, D, dtype=torch.bfloat16) for _ in range(3)),
        torch.randn(B, H, T, dtype=torch.float32),
    ]


def get_init_inputs(B: int = 8, H: int = 16, T: int = 2048, D: int = 128):
    return []


def fla(model, q, k, v, gate):
    """FLA's ``chunk_simple_gla`` on the same log-decay, with ``scale=1``."""
    chunk_simple_gla = fla_kernel("simple_gla", "chunk_simple_gla", q.device)
    g = F.logsigmoid(gate.float() + GATE_BIAS)
    o, _ = chunk_simple_gla(heads_as_batch(q), heads_as_batch(k), heads_as_batch(v), g=heads_as_batch(g),
                            scale=1.0, output_final_state=False)
    return from_heads_as_batch(o, q.shape[0], q.shape[1])


def chunked_flops(B: int, H: int, T: int, D: int, **_) -> float:
    """Per chunk of 64 tokens: q k^T and A v (2*C*C*D each) plus q S and k^T v (2*C*D*D each)."""
    return B * H * -(-T // CHUNK) * 4.0 * CHUNK * D * (CHUNK + D)


SPEC = TaskSpec(
    id="simple_gla_fwd_bf16",
    family="linear_attention",
    description=(
        "Simple GLA forward: for bfloat16 q, k, v [B, H, T, D] and a float32 raw gate [B, H, T], "
        "let g = logsigmoid(gate + 4) (log-decay, <= 0) and G = cumsum(g) over T; return bfloat16 "
        "[B, H, T, D] with o_t = sum_{s<=t} exp(G_t - G_s) (q_t . k_s) v_s (no 1/sqrt(D) scale). "
        "T is arbitrary. Use the chunked form: within a chunk a masked decay matrix and tensor-core "
        "matmuls, across chunks a carried [D, D] state in float32."
    ),
    module="hawkeye_env.tasks.simple_gla_fwd_bf16.task",
    dtypes=("bfloat16", "float32"),
    cpu_shapes=({"B": 1, "H": 2, "T": 67, "D": 16}, {"B": 2, "H": 1, "T": 130, "D": 32}),
    gpu_shapes=({"B": 8, "H": 16, "T": 2048, "D": 128},),
    flops=chunked_flops,
    bytes_moved=lambda B, H, T, D, **_: 2.0 * 4 * B * H * T * D + 4.0 * B * H * T,
    tags=("chunked_scan", "linear_attention"),
    tolerances={**DEFAULT_TOLERANCES, "bfloat16": LINEAR_ATTENTION_BF16},
    solution="hawkeye_env.tasks.simple_gla_fwd_bf16.solution",
    vendor_baselines={"fla": "hawkeye_env.tasks.simple_gla_fwd_bf16.task:fla"},
    targets={"fla": 1.0, "compile": 18.9},
    layouts=("offset",),
)
