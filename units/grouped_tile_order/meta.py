"""Taxonomy entry and inputs of ``grouped_tile_order``.

Shapes are ``{"M": rows of a, "N": columns of b, "K": inner dimension}``; inputs are bfloat16.
"""

from __future__ import annotations

from units.lib.inputs import bf16_matmul_inputs as make_inputs  # noqa: F401 (UNIT.make_inputs)
from units.lib.spec import Metric, Unit

UNIT = Unit(
    name="grouped_tile_order",
    title="Grouped (L2-aware) tile order for tiled GEMM",
    architecture="ampere+",
    strategy="tiled tensor-core matmul with L2-aware (grouped / swizzled) tile order",
    precisions=("bf16",),
    tags=("tiled_mma", "grouped_tile_order"),
    summary=(
        "Map program ids to output tiles in groups of GROUP_M tile-rows, walked column by column, so "
        "the CTAs resident at one time reuse a few A row-strips and B column-strips from L2. In "
        "row-major order every wave streams all of B, which at 8192^3 is 128 MB against a 50 MB L2."
    ),
    metric=Metric(
        name="lts__t_sector_hit_rate.pct",
        unit="%",
        higher_is_better=True,
        how=(
            "Nsight Compute lts__t_sector_hit_rate.pct of the GEMM kernel at M=N=K=8192 bf16 "
            "(ncu --clock-control none, one launch after a warm-up); TFLOP/s reported beside it"
        ),
        # Counting L2 requests per wave of 132 resident 128x128 CTAs: row-major order requests
        # 528 MB of which 132 MB are distinct (about 75% hits); GROUP_M=8 requests the same 528 MB
        # of which 49 MB are distinct (about 91%). The same count predicts 86% for the ungrouped
        # 4096^3 kernel of anchors/h200-profilers-2026-11-29.md, which measured 84%.
        min_margin=1.1,
    ),
    solution="units.grouped_tile_order.kernel:matmul",
    naive="units.grouped_tile_order.naive:matmul",
    reference="units.grouped_tile_order.reference:matmul",
    make_inputs="units.grouped_tile_order.meta:make_inputs",
    cpu_shapes=({"M": 33, "N": 47, "K": 65}, {"M": 1100, "N": 20, "K": 16}),
    gpu_shapes=({"M": 8192, "N": 8192, "K": 8192},),
    flops=lambda M, N, K: 2.0 * M * N * K,
    bytes_moved=lambda M, N, K: 2.0 * (M * K + K * N + M * N),
)
