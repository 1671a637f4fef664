"""Taxonomy entry and inputs of ``software_pipelining``.

Shapes are ``{"M": rows of a, "N": columns of b, "K": inner dimension}``; inputs are bfloat16.
"""

from __future__ import annotations

from units.lib.inputs import bf16_matmul_inputs as make_inputs  # noqa: F401 (UNIT.make_inputs)
from units.lib.spec import Metric, Unit

UNIT = Unit(
    name="software_pipelining",
    title="Multi-stage software pipelining of the K loop",
    architecture="ampere+",
    strategy="multi-stage software pipelining",
    precisions=("bf16",),
    tags=("software_pipelining", "tiled_mma"),
    summary=(
        "Keep several K iterations of A/B tile loads in flight (a num_stages-deep shared-memory ring "
        "filled by asynchronous copies) so tl.dot never waits on global memory. The unpipelined loop "
        "stalls the tensor cores for a full DRAM/L2 round trip every iteration."
    ),
    metric=Metric(
        name="achieved_tflops",
        unit="TFLOP/s",
        higher_is_better=True,
        how="2*M*N*K flops over the launch-hidden CUDA-event median at M=N=K=4096 bf16, L2 flushed",
        # A 128x128x64 bf16 tile step is ~0.4 us of tensor-core work per SM at 740 TFLOP/s while a
        # global load round trip is ~0.5-1 us, so the unpipelined loop at least doubles each step;
        # 1.2x leaves room for a second resident CTA per SM (32 KB of shared memory at one stage)
        # overlapping part of the wait.
        min_margin=1.2,
    ),
    solution="units.software_pipelining.kernel:matmul",
    naive="units.software_pipelining.naive:matmul",
    reference="units.software_pipelining.reference:matmul",
    make_inputs="units.software_pipelining.meta:make_inputs",
    cpu_shapes=({"M": 33, "N": 47, "K": 65}, {"M": 130, "N": 9, "K": 200}),
    gpu_shapes=({"M": 4096, "N": 4096, "K": 4096},),
    flops=lambda M, N, K: 2.0 * M * N * K,
    bytes_moved=lambda M, N, K: 2.0 * (M * K + K * N + M * N),
)
