"""Expert solution for ``nvfp4_gemm_bf16``: the ``nvfp4_gemm`` unit's kernel.

``units.nvfp4_gemm.kernel.nvfp4_gemm`` loads packed e2m1 tiles and their e4m3 block scales,
decodes them to bfloat16 in registers (exactly: an e2m1 value times an e4m3 scale fits bf16's
mantissa), feeds a bf16 ``tl.dot`` with a float32 accumulator and multiplies by the tensor scale
once in the epilogue; the decoded weight never reaches DRAM. ``tile_config`` sets the tiles.
"""

from __future__ import annotations

import torch
from torch import nn

from units.nvfp4_gemm.kernel import nvfp4_gemm


def tile_config(m: int, n: int, k: int) -> dict:
    """Tiles for the timed M = 256, N = K = 8192 shape (and the 8192^3 one), used at every shape so
    the CPU checks run the timed configuration: 128x128x128, 3 stages, 8 warps, GROUP_M = 8, the
    unit's default. 128 rows per tile decode each weight tile once per 128 activation rows (the
    decode, not DRAM, is the cost at M = 256: 36 MiB of codes and scales cross DRAM in ~9 us at
    4.27 TB/s against ~50 us of bf16 MMAs at the 687 TFLOP/s cuBLAS reached at 8192^3,
    anchors/h200-2026-11-29.json); 2 x 64 = 128 tiles fill 132 SMs in one wave. BLOCK_N = 128 (not
    the bf16 GEMM's 256) leaves registers for the decode. Pending measurement on the H200."""
    return {"block_m": 128, "block_n": 128, "block_k": 128, "group_m": 8, "num_stages": 3, "num_warps": 8}


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b_packed: torch.Tensor, b_scales: torch.Tensor,
                b_tensor_scale: torch.Tensor) -> torch.Tensor:
        tiles = tile_config(a.shape[0], b_packed.shape[1], a.shape[1])
        return nvfp4_gemm(a, b_packed, b_scales, b_tensor_scale, **tiles)
