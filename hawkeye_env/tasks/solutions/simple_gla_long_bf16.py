"""Expert solution for ``simple_gla_long_bf16``: the gate kernel, then the two-pass chunked scan.

Same function as ``simple_gla_fwd_bf16``'s expert: the unit's ``log_decay`` turns the raw gate
into the log-decay ``g = logsigmoid(gate + 4)`` (float32 ``[B, H, T]``). The scan is
``units.chunked_scan.kernel.chunk_simple_gla_parallel`` instead of ``chunk_simple_gla``: at the
timed shape (B=1, H=16, T=32768, D=128) the single-pass walk has (128 / 64) x 16 = 32 programs on
132 SMs, each walking 512 chunks in sequence, and measured 1.944 ms against FLA's 1.04 ms (0.40x,
H200, 2026-11-30). The two-pass variant stores every chunk's state in a first kernel, then computes
the outputs in a second kernel parallel over chunks (16384 programs at that shape). It is called
directly, not through ``chunk_simple_gla_auto``, so the task's CPU shapes (4 and 6 chunks, below
the dispatcher's 8) check the same path that the GPU shape runs. Its state walk runs in
``segments_for`` segments (4 at the timed shape on an H200: 0.535 ms, 1.31x FLA, in the
chunked-scan sweep of 2026-11-30; in one segment 0.78 ms, 0.90x; BENCHMARKS.md, Chunked scan).
"""

from __future__ import annotations

import torch
from torch import nn

from units.chunked_scan.kernel import chunk_simple_gla_parallel, log_decay

GATE_BIAS = 4.0  # the task's logsigmoid offset (hawkeye_env/tasks/suite/simple_gla_fwd_bf16.py)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, gate: torch.Tensor) -> torch.Tensor:
        return chunk_simple_gla_parallel(q, k, v, log_decay(gate, GATE_BIAS))
