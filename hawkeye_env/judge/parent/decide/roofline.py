"""Roofline floors: the least time a task's work can take on a GPU.

A measured time below ``max(flops / peak_flops, bytes / peak_bandwidth)`` is physically impossible
and is quarantined as a violation (threat model #15). Ceilings are vendor datasheet peaks (dense,
no sparsity), deliberately above what is measured, so an honest kernel never trips the floor: the
H200's measured copy bandwidth (BENCHMARKS.md, "Task suite against the vendors", the copy bandwidth
of each results file) and bf16 cuBLAS rate (BENCHMARKS.md, "bf16 GEMM") stay under its datasheet
4.8 TB/s and 989 TFLOP/s.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Ceiling:
    """Datasheet peaks of one GPU: dense TFLOP/s per precision and DRAM TB/s."""

    tflops: dict[str, float]
    tbps: float


CEILINGS: dict[str, Ceiling] = {
    "H200": Ceiling({"bfloat16": 989.0, "float16": 989.0, "float32": 67.0, "float8": 1979.0}, 4.8),
    "H100": Ceiling({"bfloat16": 989.0, "float16": 989.0, "float32": 67.0, "float8": 1979.0}, 3.35),
    "A100": Ceiling({"bfloat16": 312.0, "float16": 312.0, "float32": 19.5}, 2.04),
    "B200": Ceiling({"bfloat16": 2250.0, "float16": 2250.0, "float32": 80.0, "float8": 4500.0}, 8.0),
}
# Unknown GPUs get the largest ceiling of every kind: the floor then only catches the absurd.
UNKNOWN = Ceiling(
    {k: max(c.tflops.get(k, 0.0) for c in CEILINGS.values()) for k in ("bfloat16", "float16", "float32", "float8")},
    max(c.tbps for c in CEILINGS.values()),
)


def ceiling_for(device_name: str) -> Ceiling:
    """The ceiling whose key appears in ``device_name`` (e.g. 'NVIDIA H200'), else ``UNKNOWN``."""
    for key, ceiling in CEILINGS.items():
        if key in device_name:
            return ceiling
    return UNKNOWN


def floor_ms(flops: float, bytes_moved: float, dtype: str, device_name: str) -> float:
    """Lower bound in milliseconds for ``flops`` at ``dtype``'s peak and ``bytes_moved`` at DRAM peak.

    Non-tensor-core fp32 FLOPs are bounded by the tensor-core bf16 peak (a kernel may use tf32 or
    bf16 units where the task allows), so only the fastest unit counts.
    """
    ceiling = ceiling_for(device_name)
    fastest = max(ceiling.tflops.values())
    peak = fastest if dtype == "float32" else ceiling.tflops.get(dtype, fastest)
    compute_ms = flops / (peak * 1e12) * 1e3
    memory_ms = bytes_moved / (ceiling.tbps * 1e12) * 1e3
    return max(compute_ms, memory_ms)
