"""Expert solution for ``gemm_skinny_bf16``: the ``persistent_splitk`` unit's split-K GEMM.

``units.persistent_splitk.kernel.matmul`` splits K into ranges computed by separate programs,
writes float32 partial tiles and sums them in a fixed order with a second kernel (deterministic,
no atomics). ``tile_config`` sets the tiles, the split and the operand swap.
"""

from __future__ import annotations

import torch
from torch import nn

from units.persistent_splitk.kernel import matmul


def tile_config(m: int, n: int, k: int) -> dict:
    """Tiles for the timed skinny shape M = 64, N = 4096, K = 16384 (operand-read bound), used at
    every shape so the CPU checks run the timed configuration: from the H200 small-M sweep on
    device time (``evals.kerneldev.sweeps.small_m_gemm``, 2026-12-03, twenty configurations).
    ``swap_ab`` computes each tile as ``C^T = B^T A^T`` so 128 columns of B are the MMA's M side and
    the 64 rows of A its N side; 128x128 tiles in 4 stages, 2 K-splits: 32 x 2 = 64 programs, each
    with a 64-step K loop. It ran 0.048 ms, 0.96x cuBLAS, level with 4 splits (0.963x, within the
    rounds' spread); 8 and 16 splits were slower (0.89x, 0.79x), as was the unit's plain
    64x128 dot split by ``split_k_for`` (0.83x)."""
    return {"block_m": 64, "block_n": 128, "block_k": 128, "num_stages": 4, "num_warps": 4,
            "split_k": 2, "swap_ab": True}


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return matmul(a, b, **tile_config(a.shape[0], b.shape[1], a.shape[1]))
