"""Taxonomy entry and inputs of ``warp_specialization``.

Shapes are ``{"M": rows of a, "N": columns of b, "K": inner dimension}``; inputs are bfloat16.
"""

from __future__ import annotations

from units.inputs import bf16_matmul_inputs as make_inputs  # noqa: F401 (UNIT.make_inputs)
from units.spec import Metric, Unit

UNIT = Unit(
    name="warp_specialization",
    title="Warp specialization: producer and consumer warp groups",
    architecture="hopper",
    strategy="warp specialization (producer/consumer)",
    precisions=("bf16",),
    tags=("warp_specialization", "tiled_mma"),
    summary=(
        "Split the K loop into a producer warp group issuing TMA loads and consumer warp groups "
        "running async wgmma, synchronized by mbarriers, with registers moved to the consumers; "
        "in Triton one keyword, tl.range(..., warp_specialize=True), on a descriptor-load K loop."
    ),
    metric=Metric(
        name="achieved_tflops",
        unit="TFLOP/s",
        higher_is_better=True,
        how="2*M*N*K flops over the CUDA-event median time at M=N=K=4096 bf16, L2 flushed",
        # H200, 2026-11-30: at 8192^3 both kernels sit at the tensor-core ceiling (687 vs 678
        # TFLOP/s, 1.01x), so the unit is measured at 4096^3, one wave of 128x256 tiles, where the
        # specialized loop hides load latency the single-warp-group loop exposes. Three runs gave
        # 1.29x (579 vs 449 TFLOP/s), 1.14x (a sweep of the same tile and stages) and 1.05x (564
        # vs 537, the other GPU of a two-GPU machine); 1.03 sits under all three. The smallest
        # margin in the taxonomy: Hopper's wgmma loop is already asynchronous.
        min_margin=1.03,
    ),
    solution="units.warp_specialization.kernel:matmul",
    naive="units.warp_specialization.naive:matmul",
    reference="units.warp_specialization.reference:matmul",
    make_inputs="units.warp_specialization.meta:make_inputs",
    cpu_shapes=({"M": 33, "N": 40, "K": 72}, {"M": 130, "N": 24, "K": 200}),
    gpu_shapes=({"M": 4096, "N": 4096, "K": 4096}, {"M": 8192, "N": 8192, "K": 8192}),
    flops=lambda M, N, K: 2.0 * M * N * K,
    bytes_moved=lambda M, N, K: 2.0 * (M * K + K * N + M * N),
    why=(
        "producer/consumer warp groups need TMA, mbarrier-tracked async wgmma and setmaxnreg "
        "register reallocation, all sm_90 (Hopper) features"
    ),
)
