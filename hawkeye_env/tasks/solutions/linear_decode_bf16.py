"""Expert solution for ``linear_decode_bf16``: the ``persistent_splitk`` unit's split-K GEMM.

``y = x @ w.t()``: ``w.t()`` of the ``[N, K]`` weight is a ``[K, N]`` view whose K stride is 1,
which ``units.persistent_splitk.kernel.matmul`` takes as is (any strides), so every weight tile
is read K-contiguous and exactly once. The unit splits K into ranges computed by separate programs,
writes float32 partials and sums them in a fixed order with a second kernel (deterministic, no
atomics). ``tile_config`` sets the tiles, the split and the operand swap.
"""

from __future__ import annotations

import torch
from torch import nn

from units.persistent_splitk.kernel import matmul


def tile_config(m: int, n: int, k: int) -> dict:
    """Tiles for the timed decode shape M = 16, N = 6144, K = 4096 (weight-read bound), used at
    every shape so the CPU checks run the timed configuration: the fastest of the H200 small-M
    sweep on device time (``evals.kerneldev.sweeps.small_m_gemm``, 2026-12-03, twenty
    configurations). ``swap_ab`` computes each tile as ``C^T = W A^T`` so the 128 weight rows of a
    tile are the MMA's M side (Hopper's wgmma wants 64 rows per warp group; 16 activation rows
    alone fall back to mma.sync), 128x128 weight tiles in 4 stages, 2 K-splits: 48 x 2 = 96
    programs. It ran 0.0236 ms, 0.94x cuBLAS (2.1 TB/s of weight); more splits were slower
    (4: 0.84x, 8: 0.77x, 16: 0.70x), as was the plain 16x64x128 dot split by ``split_k_for``
    (0.86x)."""
    return {"block_m": 16, "block_n": 128, "block_k": 128, "num_stages": 4, "num_warps": 4,
            "split_k": 2, "swap_ab": True}


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(out_features, in_features, dtype=torch.bfloat16))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        w = self.weight
        return matmul(x, w.t(), **tile_config(x.shape[0], w.shape[0], x.shape[1]))
