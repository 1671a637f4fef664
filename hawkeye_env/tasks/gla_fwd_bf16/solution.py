"""Expert solution for ``gla_fwd_bf16``: ``units.chunked_scan.gla.chunk_gla`` on the raw gates.

One program per (64 value columns, batch x head) walks the sequence in chunks of 64 tokens with a
float32 ``[D, 64]`` state; the gate transform ``logsigmoid(gate + 1) / 16`` runs on load (no extra
pass over the ``[B, H, T, D]`` gates) and the per-channel decays are folded into the MMA operands.
"""

from __future__ import annotations

import torch
from torch import nn

from units.chunked_scan.gla import chunk_gla

GATE_BIAS, GATE_NORMALIZER = 1.0, 16.0  # the task's gate transform (hawkeye_env/tasks/gla_fwd_bf16/task.py)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, gate: torch.Tensor) -> torch.Tensor:
        return chunk_gla(q, k, v, gate, raw_gate=True, bias=GATE_BIAS, normalizer=GATE_NORMALIZER)
