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
        how="2*M*N*K flops over the CUDA-event median time at M=N=K=8192 bf16, L2 flushed",
        # The smallest margin in the taxonomy: the unspecialized TMA kernel is already pipelined
        # and tensor-core bound (tutorial Triton reaches 0.96x cuBLAS at 8192^3 in
        # anchors/h200-2026-11-29.json), so specialization can only recover the last few percent
        # of MMA idle time; 2% is above the run-to-run noise of a CUDA-event median.
        min_margin=1.02,
    ),
    solution="units.warp_specialization.kernel:matmul",
    naive="units.warp_specialization.naive:matmul",
    reference="units.warp_specialization.reference:matmul",
    make_inputs="units.warp_specialization.meta:make_inputs",
    cpu_shapes=({"M": 33, "N": 40, "K": 72}, {"M": 130, "N": 24, "K": 200}),
    gpu_shapes=({"M": 8192, "N": 8192, "K": 8192},),
    flops=lambda M, N, K: 2.0 * M * N * K,
    bytes_moved=lambda M, N, K: 2.0 * (M * K + K * N + M * N),
    why=(
        "producer/consumer warp groups need TMA, mbarrier-tracked async wgmma and setmaxnreg "
        "register reallocation, all sm_90 (Hopper) features"
    ),
)
