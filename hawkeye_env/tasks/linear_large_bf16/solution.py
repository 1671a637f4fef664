"""Expert solution for ``linear_large_bf16``: the ``ws_persistent_gemm`` unit's warp-specialized Gluon
GEMM on a Hopper GPU, the ``persistent_splitk`` unit's persistent GEMM elsewhere.

``y = x @ w.t()``: ``w.t()`` of the ``[N, K]`` weight is a ``[K, N]`` view with K stride 1, which
``units.persistent_splitk.kernel.matmul_persistent`` takes as is (any strides; weight tiles load
K-contiguous and feed ``tl.dot`` without a copy). One program per SM walks the 1024 output tiles
(128x256x64, 3 stages, 8 warps) in grouped order, ``GROUP_M = 8`` tile-rows at a time, so the
resident programs share activation and weight strips in L2 and no tail wave of whole programs is
left at the end of each of the K = 14336 loops. In the H200 bf16 GEMM sweep (2026-11-30, M = 8192,
N = 4096, K = 14336) it ran 1.508 ms, 0.90x ``F.linear`` (cuBLAS) and 1.21x the
``grouped_tile_order`` GEMM at the same tile (0.74x); BENCHMARKS.md, bf16 GEMM sweep.

On a Hopper GPU, when TMA can describe ``x``, the weight and the output (16-byte rows:
``fits_tma``), the Gluon kernel runs instead (``matmul_or_twin`` picks): one TMA producer warp
feeding two wgmma consumer warpgroups through an mbarrier ring, the weight's ``[N, K]`` rows read
in place as K-major boxes (``units/ws_persistent_gemm/README.md``). Gluon has no interpreter, so
the CPU runs the Triton kernel above.
"""

from __future__ import annotations

import torch
from torch import nn

from units.ws_persistent_gemm.kernel import matmul_or_twin


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(out_features, in_features, dtype=torch.bfloat16))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return matmul_or_twin(x, self.weight.t())
