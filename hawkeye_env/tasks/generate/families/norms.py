"""Normalizations: LayerNorm, RMSNorm and GroupNorm, each with or without affine parameters, the
first two optionally after a residual add, RMSNorm optionally gated (``rmsnorm(x) * silu(z)``,
Mamba-2's gated norm).

LayerNorm and RMSNorm normalize the last dim of ``[M, N]``; GroupNorm normalizes each of ``G``
channel groups of ``[B, G * CG, L]`` over its ``CG * L`` elements, as ``F.group_norm``.
"""

from __future__ import annotations

import random

from hawkeye_env.tasks.generate.dims import draw_shapes
from hawkeye_env.tasks.generate.draft import Param, TaskDraft, TensorArg
from hawkeye_env.tasks.generate.families.common import LOW_PRECISION, draw_dtype, draw_layouts, wrap_precision

EPS = (1e-5, 1e-6)
HINT = "Memory bound: read each row once, reduce it on chip (mean and variance in one pass), write once"


def _p(name: str, low: bool) -> str:
    return f"upcast(self.{name})" if low else f"self.{name}"


def _row_norm(kind: str, affine: str, low: bool) -> list[str]:
    if kind == "layernorm":
        lines = ["mean = h.mean(-1, keepdim=True)", "var = (h - mean).pow(2).mean(-1, keepdim=True)",
                 "h = (h - mean) * torch.rsqrt(var + EPS)"]
    else:
        lines = ["h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + EPS)"]
    if affine != "none":
        lines.append(f"h = h * {_p('weight', low)}" + (f" + {_p('bias', low)}" if affine == "weight_bias" else ""))
    return lines


def draw_row_norm(rng: random.Random) -> TaskDraft:
    """LayerNorm or RMSNorm over the last dim, with the options above."""
    dtype, kind = draw_dtype(rng), rng.choice(("layernorm", "rmsnorm"))
    low = dtype in LOW_PRECISION
    affine = rng.choice(("none", "weight", "weight_bias") if kind == "layernorm" else ("none", "weight"))
    residual, gated = rng.random() < 0.4, kind == "rmsnorm" and rng.random() < 0.3
    inputs = [TensorArg("x", ("M", "N"), dtype)]
    body = []
    if residual:
        inputs.append(TensorArg("residual", ("M", "N"), dtype))
        body.append("h = h + residual")
    body += _row_norm(kind, affine, low)
    if gated:
        inputs.append(TensorArg("z", ("M", "N"), dtype))
        body.append("h = h * F.silu(z)")
    params = (Param("weight", ("N",), dtype),) + ((Param("bias", ("N",), dtype),) if affine == "weight_bias" else ())
    params = params if affine != "none" else ()
    lines, helpers = wrap_precision(body, dtype, "h", [t.name for t in inputs])
    gpu, cpu = draw_shapes(rng, {"M": "rows", "N": "cols"})
    stem = "_".join(x for x in (kind, affine if affine != "none" else "plain", "res" if residual else "",
                                "gated" if gated else "") if x)
    return TaskDraft(
        stem=stem, family="normalization", dtype=dtype,
        summary=(f"{'LayerNorm' if kind == 'layernorm' else 'RMSNorm'} over the last dim of [M, N] ("
                 + ", ".join(x for x in ("residual added first" if residual else "", f"affine: {affine}",
                                         "gated by silu(z)" if gated else "", "eps EPS") if x) + ")"),
        inputs=tuple(inputs), params=params, init_keys=("N",) if params else (), body=tuple(lines),
        out_dtype=dtype, out_shape=("M", "N"), gpu_shape=gpu, cpu_shapes=cpu,
        flops=f"{8 + 2 * len(inputs)} * M * N", tags=("row_reduction", "coalesced_access"), hint=HINT,
        constants={"EPS": rng.choice(EPS)}, helpers=helpers, layouts=draw_layouts(rng, ("sliced", "offset")),
        value_distributions=("zeros", "repeated", "large"),
        # x^2 of 1e4 is 1e8: fine in float32, past fp16's 6.5e4, so a half-precision sum of squares fails.
        large_magnitude=1e4, graph=("row_norm", kind, affine, str(residual), str(gated)),
    )


def draw_group_norm(rng: random.Random) -> TaskDraft:
    """``F.group_norm`` of ``[B, G * CG, L]`` with or without per-channel weight and bias."""
    dtype, affine = draw_dtype(rng), rng.random() < 0.6
    low = dtype in LOW_PRECISION
    weight = f", {_p('weight', low)}, {_p('bias', low)}" if affine else ""
    body = [f"h = F.group_norm(h, self.groups{weight}, eps=EPS)"]
    lines, helpers = wrap_precision(body, dtype, "h", ["x"])
    roles = {"B": "batch", "G": "norm_groups", "CG": "group", "L": "cols"}
    gpu, cpu = draw_shapes(rng, roles)
    params = (Param("weight", ("G * CG",), dtype), Param("bias", ("G * CG",), dtype)) if affine else ()
    return TaskDraft(
        stem=f"groupnorm_{'affine' if affine else 'plain'}", family="normalization", dtype=dtype,
        summary=f"GroupNorm of x [B, G * CG, L] with G groups ({'affine' if affine else 'no affine'}, eps EPS)",
        inputs=(TensorArg("x", ("B", "G * CG", "L"), dtype),), params=params, init_keys=("G", "CG"),
        init_lines=("self.groups = G",), body=tuple(lines), out_dtype=dtype, out_shape=("B", "G * CG", "L"),
        gpu_shape=gpu, cpu_shapes=cpu, flops="8 * B * G * CG * L", tags=("row_reduction", "coalesced_access"),
        hint=HINT.replace("each row", "each (batch, group) slice of CG * L elements") + "; split long slices",
        constants={"EPS": rng.choice(EPS)}, helpers=helpers, layouts=draw_layouts(rng, ("offset",)),
        graph=("group_norm", str(affine)),
    )
