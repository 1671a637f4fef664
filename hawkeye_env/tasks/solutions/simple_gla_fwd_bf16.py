"""Expert solution for ``simple_gla_fwd_bf16``: a gate kernel, then the ``chunked_scan`` unit.

A small elementwise kernel turns the raw gate into the log-decay ``g = logsigmoid(gate + 4)``
(float32 ``[B, H, T]``, ``1/D`` of the q/k/v traffic), written as the overflow-free
``min(y, 0) - log(1 + exp(-|y|))``. ``units.chunked_scan.kernel.chunk_simple_gla`` then walks each
head in chunks of 64 tokens: tensor-core matmuls inside a chunk, a float32 ``[D, D]`` state across.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl
from torch import nn

from units.chunked_scan.kernel import chunk_simple_gla

GATE_BIAS = 4.0  # the task's logsigmoid offset (hawkeye_env/tasks/suite/simple_gla_fwd_bf16.py)
BLOCK = 1024


@triton.jit
def _log_decay_kernel(gate_ptr, g_ptr, n, bias, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)  # [BLOCK]
    mask = offs < n
    y = tl.load(gate_ptr + offs, mask=mask, other=0.0).to(tl.float32) + bias
    g = tl.minimum(y, 0.0) - tl.log(1.0 + tl.exp(-tl.abs(y)))
    tl.store(g_ptr + offs, g, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, gate: torch.Tensor) -> torch.Tensor:
        gate = gate.contiguous()
        g = torch.empty(gate.shape, dtype=torch.float32, device=gate.device)
        n = gate.numel()
        _log_decay_kernel[(triton.cdiv(n, BLOCK),)](gate, g, n, GATE_BIAS, BLOCK=BLOCK, num_warps=4)
        return chunk_simple_gla(q, k, v, g)
