"""Taxonomy entry and inputs of ``tma_descriptors``.

Shapes are ``{"M": rows of a, "N": columns of b, "K": inner dimension}``; inputs are bfloat16.
"""

from __future__ import annotations

from units.lib.inputs import bf16_matmul_inputs as make_inputs  # noqa: F401 (UNIT.make_inputs)
from units.lib.spec import Metric, Unit

UNIT = Unit(
    name="tma_descriptors",
    title="TMA tensor-descriptor loads and stores",
    architecture="hopper",
    strategy="TMA tensor-descriptor loads and stores",
    precisions=("bf16",),
    tags=("tma", "tiled_mma"),
    summary=(
        "Move whole A/B/C tiles with TMA bulk tensor copies described by a TensorDescriptor instead "
        "of per-thread pointer arithmetic and cp.async: one thread issues each tile, bounds are "
        "handled by the hardware, and the freed registers and issue slots go to the MMA."
    ),
    metric=Metric(
        name="achieved_tflops",
        unit="TFLOP/s",
        higher_is_better=True,
        how="2*M*N*K flops over the launch-hidden CUDA-event median at M=N=K=8192 bf16, L2 flushed",
        # Both kernels are tensor-core bound at 8192^3 (cuBLAS 687, tutorial Triton 658 TFLOP/s in
        # anchors/h200-2026-11-29.json); TMA removes address math and per-thread copies from the
        # 8 MMA warps, worth a few percent there, so the margin is set at 5%.
        min_margin=1.05,
    ),
    solution="units.tma_descriptors.kernel:matmul",
    naive="units.tma_descriptors.naive:matmul",
    reference="units.tma_descriptors.reference:matmul",
    make_inputs="units.tma_descriptors.meta:make_inputs",
    cpu_shapes=({"M": 33, "N": 40, "K": 72}, {"M": 130, "N": 24, "K": 200}),
    gpu_shapes=({"M": 8192, "N": 8192, "K": 8192},),
    flops=lambda M, N, K: 2.0 * M * N * K,
    bytes_moved=lambda M, N, K: 2.0 * (M * K + K * N + M * N),
    why="TMA (cp.async.bulk.tensor, the tensor-map descriptor) exists from sm_90 (Hopper) on",
)
