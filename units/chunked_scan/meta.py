"""Taxonomy entry and inputs of ``chunked_scan``.

Shapes are ``{"B", "H", "T", "D"}``. Inputs: q, k, v standard normal in bf16 with q multiplied by
``D^-0.5`` (FLA's default scale, folded in); ``g = logsigmoid(x + 4)`` with x standard normal
(mean decay about 0.02 per token, so the carried state matters across several chunks).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from units.lib.spec import Metric, Unit

CHUNK = 64


def make_inputs(shape, device: str, seed: int) -> tuple:
    """``(q, k, v bf16 [B, H, T, D], g fp32 [B, H, T])``."""
    b, h, t, d = shape["B"], shape["H"], shape["T"], shape["D"]
    gen = torch.Generator(device="cpu").manual_seed(seed)
    q, k, v = (torch.randn(b, h, t, d, generator=gen) for _ in range(3))
    g = F.logsigmoid(torch.randn(b, h, t, generator=gen) + 4.0)
    q = q * d ** -0.5
    return (*(x.to(device=device, dtype=torch.bfloat16) for x in (q, k, v)), g.to(device))


def chunked_flops(B: int, H: int, T: int, D: int) -> float:
    """FLOPs of the chunked formulation: per chunk of C = 64 tokens, q k^T and A v (2*C*C*D each)
    plus q S and k^T v (2*C*D*D each), i.e. ``4*C*D*(C + D)``; masked halves are counted."""
    chunks = -(-T // CHUNK)
    return B * H * chunks * 4.0 * CHUNK * D * (CHUNK + D)


UNIT = Unit(
    name="chunked_scan",
    title="Chunked scans for gated linear recurrences (simple GLA forward)",
    architecture="ampere+",
    strategy="chunked scans for gated linear recurrences (chunk-parallel state passing, gates in log space)",
    precisions=("bf16",),
    tags=("chunked_scan", "linear_attention"),
    summary=(
        "Split the sequence into 64-token chunks: inside a chunk the recurrence is a masked "
        "attention-like product with decays exp(G_i - G_j) built in log space; across chunks a "
        "[D, D] state is carried in registers. Four tensor-core MMAs per chunk replace 64 "
        "sequential rank-1 updates."
    ),
    metric=Metric(
        name="achieved_tflops",
        unit="TFLOP/s",
        higher_is_better=True,
        how="chunked-formulation FLOPs (meta.chunked_flops) over the launch-hidden CUDA-event median at "
            "B=8 T=2048 H=16 D=128",
        min_margin=5.0,
    ),
    solution="units.chunked_scan.kernel:chunk_simple_gla",
    naive="units.chunked_scan.naive:chunk_simple_gla",
    reference="units.chunked_scan.reference:simple_gla",
    make_inputs="units.chunked_scan.meta:make_inputs",
    cpu_shapes=({"B": 1, "H": 2, "T": 67, "D": 16}, {"B": 2, "H": 1, "T": 130, "D": 32}),
    gpu_shapes=({"B": 8, "H": 16, "T": 2048, "D": 128},),
    flops=chunked_flops,
    bytes_moved=lambda B, H, T, D: B * H * T * (4.0 * D * 2 + 4),
)
