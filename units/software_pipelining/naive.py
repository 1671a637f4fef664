"""``software_pipelining`` without the strategy: the same tiled bf16 GEMM at ``num_stages=1``.

With one stage the compiler emits each K iteration as load A and B tiles, wait for them, then
``tl.dot``: the tensor cores idle for a full global-memory round trip every iteration. Kernel,
tiles, tile order and warps are those of ``kernel.py``.

Inputs ``a [M, K]`` and ``b [K, N]`` are bfloat16 with any strides; the output is a contiguous
bfloat16 ``[M, N]`` tensor accumulated in float32.
"""

from __future__ import annotations

import torch

from units.software_pipelining.kernel import launch


def matmul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """``a [M, K] bf16 @ b [K, N] bf16 -> [M, N] bf16``, fp32 accumulation, no K pipelining."""
    return launch(a, b, num_stages=1)
