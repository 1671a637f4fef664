"""Expert solution for ``simple_gla_long_bf16``: the gate kernel, then the segmented walks.

Same function as ``simple_gla_fwd_bf16``'s expert: the unit's ``log_decay`` turns the raw gate
into the log-decay ``g = logsigmoid(gate + 4)`` (float32 ``[B, H, T]``). At the timed shape (B=1,
H=16, T=32768, D=128) the short task's single walk has (128 / 64) x 16 = 32 programs on 132 SMs,
each walking 512 chunks, 3.4x FLA's time
(``bench/results/sweep-chunked-scan-long/chunked-scan-segmented-sweep-h200-2026-12-03.jsonl``).
The scan here is ``units.chunked_scan.segmented.chunk_simple_gla_segmented``: the sequence cut into
runs (``segments_for_walk``: 8 on 132 SMs), each run's final state from a state-only walk, the
carries chained, then 256 walks of 64 chunks, each from its carry, with no per-chunk state in DRAM:
1.32x FLA and 1.25x the two-pass ``chunk_simple_gla_parallel`` in that sweep (BENCHMARKS.md, Chunked
scan). The task's CPU shapes (4 and 6 chunks) run the same three kernels under the interpreter.
"""

from __future__ import annotations

import torch
from torch import nn

from units.chunked_scan.kernel import log_decay
from units.chunked_scan.segmented import chunk_simple_gla_segmented

GATE_BIAS = 4.0  # the task's logsigmoid offset (hawkeye_env/tasks/simple_gla_fwd_bf16/task.py)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, gate: torch.Tensor) -> torch.Tensor:
        return chunk_simple_gla_segmented(q, k, v, log_decay(gate, GATE_BIAS))
