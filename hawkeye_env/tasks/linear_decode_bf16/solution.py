"""Expert solution for ``linear_decode_bf16``: the ``persistent_splitk`` unit's split-K GEMM.

``y = x @ w.t()``: ``w.t()`` of the ``[N, K]`` weight is a ``[K, N]`` view whose K stride is 1,
which ``units.persistent_splitk.kernel.matmul`` takes as is (any strides), so every weight tile
is read K-contiguous and exactly once. The unit splits K into ranges computed by separate programs
and writes float32 partials; with ``fused_reduce`` the last program of each tile to finish sums
them in a fixed order (deterministic; one integer atomic per program counts the arrivals), so no
second kernel runs. ``tile_config`` sets the tiles, the split, the operand swap and the fusion.
"""

from __future__ import annotations

import torch
from torch import nn

from units.persistent_splitk.kernel import matmul


def tile_config(m: int, n: int, k: int) -> dict:
    """Tiles for the timed decode shape M = 16, N = 6144, K = 4096 (weight-read bound), used at
    every shape so the CPU checks run the timed configuration: the fastest of the small-M sweep on
    device time (``bench.kerneldev.sweeps.small_m_gemm``; BENCHMARKS.md, Small-M GEMM). ``swap_ab``
    computes each tile as ``C^T = W A^T`` so the 128 weight rows of a tile are the MMA's M side
    (Hopper's wgmma wants 64 rows per warp group; 16 activation rows alone fall back to mma.sync),
    128x128 weight tiles in 4 stages, 2 K-splits: 48 x 2 = 96 programs, the partials summed by the
    last split of each tile (``fused_reduce``). In the sweep with the fused reduction
    (``bench/results/sweep-small-m/small-m-gemm-sweep-h200-2026-12-04.jsonl``) it ran 0.0224 ms,
    0.99x cuBLAS, where the same tiles with the second reduction kernel ran 0.92x; more splits were
    slower (3: 0.84x, 4: 0.86x, 8: 0.79x fused), as was the plain 16x64x128 dot split by
    ``split_k_for`` (0.86x). Judged: BENCHMARKS.md, Task suite against the vendors."""
    return {"block_m": 16, "block_n": 128, "block_k": 128, "num_stages": 4, "num_warps": 4,
            "split_k": 2, "swap_ab": True, "fused_reduce": True}


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(out_features, in_features, dtype=torch.bfloat16))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        w = self.weight
        return matmul(x, w.t(), **tile_config(x.shape[0], w.shape[0], x.shape[1]))
