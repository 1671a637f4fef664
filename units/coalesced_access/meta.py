"""Taxonomy entry and inputs of ``coalesced_access``.

Shapes are ``{"M": rows, "N": columns}`` plus ``"bf16": 1`` for bfloat16 inputs (float32 otherwise).
"""

from __future__ import annotations

import torch

from units.lib.spec import Metric, Unit


def _dtype(shape) -> torch.dtype:
    return torch.bfloat16 if shape.get("bf16", 0) else torch.float32


def make_inputs(shape, device: str, seed: int) -> tuple:
    """``(x [M, N], alpha)``: standard-normal ``x`` in the shape's dtype, ``alpha`` in [0.5, 2)."""
    g = torch.Generator(device="cpu").manual_seed(seed)
    x = torch.randn(shape["M"], shape["N"], generator=g).to(device=device, dtype=_dtype(shape))
    alpha = 0.5 + 1.5 * float(torch.rand((), generator=g))
    return x, alpha


def _bytes_moved(M: int, N: int, bf16: int = 0) -> float:
    return 2.0 * M * N * (2 if bf16 else 4)


UNIT = Unit(
    name="coalesced_access",
    title="Coalesced, vectorized global loads and stores",
    architecture="ampere+",
    strategy="coalesced and vectorized global access",
    precisions=("fp32", "bf16"),
    tags=("coalesced_access",),
    summary=(
        "Map consecutive lanes to consecutive addresses so every warp access is whole 128-byte lines "
        "and loads widen to 128 bits; a column walk of a row-major tensor (stride N between lanes) "
        "fetches a 32-byte sector per 4 useful bytes."
    ),
    metric=Metric(
        name="achieved_tbps",
        unit="TB/s",
        higher_is_better=True,
        how="2*M*N*4 bytes (read x, write out) over the launch-hidden CUDA-event median at M=N=8192 fp32, L2 flushed",
        # H200 anchor (anchors/h200-profilers-2026-11-29.md): a stride-33 fp32 copy moved 24x the
        # DRAM bytes and ran 30x slower than the unit-stride copy; 3x leaves room for L2 reuse of
        # neighbouring columns, which the column walk gets and the stride-33 copy did not.
        min_margin=3.0,
    ),
    solution="units.coalesced_access.kernel:scale",
    naive="units.coalesced_access.naive:scale",
    reference="units.coalesced_access.reference:scale",
    make_inputs="units.coalesced_access.meta:make_inputs",
    # CPU: two column blocks with a masked tail, bf16 with masked rows and columns, one exact block (the naive
    # kernel runs one interpreted program per column, so N sets its CPU time).
    cpu_shapes=({"M": 7, "N": 1100}, {"M": 13, "N": 300, "bf16": 1}, {"M": 1, "N": 1024}),
    gpu_shapes=({"M": 8192, "N": 8192},),
    flops=lambda M, N, bf16=0: float(M * N),
    bytes_moved=_bytes_moved,
)
