"""Expert solution for ``gemm_skinny_bf16``: the ``persistent_splitk`` unit's split-K GEMM.

``units.persistent_splitk.kernel.matmul`` splits K into ranges computed by separate programs and
writes float32 partial tiles; with ``fused_reduce`` the last program of each tile to finish sums
them in a fixed order (deterministic; one integer atomic per program counts the arrivals), so no
second kernel runs. ``tile_config`` sets the tiles, the split, the operand swap and the fusion.
"""

from __future__ import annotations

import torch
from torch import nn

from units.persistent_splitk.kernel import matmul


def tile_config(m: int, n: int, k: int) -> dict:
    """Tiles for the timed skinny shape M = 64, N = 4096, K = 16384 (operand-read bound), used at
    every shape so the CPU checks run the timed configuration: from the small-M sweep on device
    time (``bench.kerneldev.sweeps.small_m_gemm``; BENCHMARKS.md, Small-M GEMM).
    ``swap_ab`` computes each tile as ``C^T = B^T A^T`` so 128 columns of B are the MMA's M side and
    the 64 rows of A its N side; 128x128 tiles in 4 stages, 3 K-splits: 32 x 3 = 96 programs, the
    partials summed by the last split of each tile (``fused_reduce``). In the sweep with the fused
    reduction (``bench/results/sweep-small-m/small-m-gemm-sweep-h200-2026-12-04.jsonl``) it ran 0.0469 ms, 1.00x
    cuBLAS; fused at 2 splits 0.98x, the 2-split tiles with the second reduction kernel 0.97x, 4 and
    8 splits slower (0.96x, 0.85x), as was the unit's plain 64x128 dot split by ``split_k_for``
    (0.84x). Judged: BENCHMARKS.md, Task suite against the vendors."""
    return {"block_m": 64, "block_n": 128, "block_k": 128, "num_stages": 4, "num_warps": 4,
            "split_k": 3, "swap_ab": True, "fused_reduce": True}


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return matmul(a, b, **tile_config(a.shape[0], b.shape[1], a.shape[1]))
