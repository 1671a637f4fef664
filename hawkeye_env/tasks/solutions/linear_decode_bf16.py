"""Expert solution for ``linear_decode_bf16``: the ``persistent_splitk`` unit's split-K GEMM.

``y = x @ w.t()``: ``w.t()`` of the ``[N, K]`` weight is a ``[K, N]`` view whose K stride is 1,
which ``units.persistent_splitk.kernel.matmul`` takes as is (any strides), so every weight tile
is read K-contiguous and exactly once. The unit splits K so that 16-row tiles along N become about
two programs per SM, writes float32 partials and sums them in a fixed order with a second kernel
(deterministic, no atomics). ``tile_config`` sets the tiles; the unit's ``split_k_for`` sizes the
split for them.
"""

from __future__ import annotations

import torch
from torch import nn

from units.persistent_splitk.kernel import matmul


def tile_config(m: int, n: int, k: int) -> dict:
    """Tiles for the timed decode shape M = 16, N = 6144, K = 4096 (weight-read bound), used at
    every shape so the CPU checks run the timed configuration. BLOCK_M = 16 is the smallest
    ``tl.dot`` M and wastes no rows at 16 tokens; 64x128 weight tiles (16 KiB) in 4 stages keep
    64 KiB of weight loads in flight per program, 80 KiB of shared memory, two programs per SM;
    96 tile columns x 2 K-splits (``split_k_for``) = 192 programs for 132 SMs. Timed once on the H200
    (2026-11-30): 0.106 ms, 0.36x cuBLAS, about 480 GB/s of weight stream; more programs in flight
    per SM is the lever the persistent_splitk sweep points to. ``forward`` passes every key to
    ``matmul``, so a winner of ``evals.sweeps.small_m_gemm`` (``swap_ab``, ``split_k``, ...) is
    adopted by returning its keywords here (``block_m`` = 16 included)."""
    return {"block_m": 16, "block_n": 64, "block_k": 128, "num_stages": 4, "num_warps": 4}


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(out_features, in_features, dtype=torch.bfloat16))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        w = self.weight
        return matmul(x, w.t(), **tile_config(x.shape[0], w.shape[0], x.shape[1]))
