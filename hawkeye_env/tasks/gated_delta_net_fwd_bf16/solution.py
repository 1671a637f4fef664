"""Expert solution for ``gated_delta_net_fwd_bf16``: ``units.chunked_scan.delta_rule.chunk_delta_rule``
with the decay gate.

As ``delta_net_fwd_bf16``'s solution, with the log-decay ``logsigmoid(gate + 4)`` computed on load
in every kernel and its chunk-local cumulative sum scaling the intra-chunk matrices
(``exp(G_i - G_j)``), the WY keys (``K * exp(G)``), the state read (``Q * exp(G)``) and the state
update (``exp(G_last)``, ``K * exp(G_last - G)``).
"""

from __future__ import annotations

import torch
from torch import nn

from units.chunked_scan.delta_rule import chunk_delta_rule

GATE_BIAS = 4.0  # the task's logsigmoid offset (hawkeye_env/tasks/gated_delta_net_fwd_bf16/task.py)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, beta: torch.Tensor,
                gate: torch.Tensor) -> torch.Tensor:
        return chunk_delta_rule(q, k, v, beta, gate, gate_bias=GATE_BIAS)
