"""Reductions over chosen dims: sum, mean, max, min, log-sum-exp, variance, L2 norm, sum of
squares and mean absolute value, optionally after a pointwise map, with or without ``keepdim``.

The input is ``[M, N]``, ``[B, T, C]`` or ``[B, H, S, D]``; the reduced dims are the last, the
first, a middle one or the last two, never all (a scalar output is near constant by construction).
"""

from __future__ import annotations

import random

from hawkeye_env.tasks.generate import ops
from hawkeye_env.tasks.generate.counts import numel_expr
from hawkeye_env.tasks.generate.dims import draw_shapes
from hawkeye_env.tasks.generate.draft import TaskDraft, TensorArg
from hawkeye_env.tasks.generate.families.common import draw_dtype, draw_layouts, wrap_precision

# op -> (expression over h with {dims} and {kd}, FLOPs per input element)
REDUCTIONS = {
    "sum": ("h.sum(dim={dims}, keepdim={kd})", 1),
    "mean": ("h.mean(dim={dims}, keepdim={kd})", 1),
    "amax": ("h.amax(dim={dims}, keepdim={kd})", 1),
    "amin": ("h.amin(dim={dims}, keepdim={kd})", 1),
    "logsumexp": ("torch.logsumexp(h, dim={dims}, keepdim={kd})", 4),
    "var": ("h.var(dim={dims}, keepdim={kd}, correction=0)", 3),
    "l2norm": ("torch.linalg.vector_norm(h, dim={dims}, keepdim={kd})", 2),
    "sumsq": ("(h * h).sum(dim={dims}, keepdim={kd})", 2),
    "meanabs": ("h.abs().mean(dim={dims}, keepdim={kd})", 2),
}
SHAPES = {
    2: {"M": "rows", "N": "cols"},
    3: {"B": "batch", "T": "seq", "C": "cols"},
    4: {"B": "batch", "H": "small", "S": "seq", "D": "small"},
}


def _dims(rng: random.Random, rank: int) -> tuple[int, ...]:
    choices = [(rank - 1,), (0,)] + ([(1,), (rank - 2, rank - 1)] if rank > 2 else [])
    return rng.choice(choices)


def draw_reduction(rng: random.Random) -> TaskDraft:
    dtype = draw_dtype(rng)
    rank = rng.choice(sorted(SHAPES))
    roles = SHAPES[rank]
    full = tuple(roles)
    dims, keepdim = _dims(rng, rank), rng.random() < 0.5
    op = rng.choice(sorted(REDUCTIONS))
    body, pre_cost, graph, pre = [], 0, ["reduce", op, str(dims), str(keepdim)], ""
    if rng.random() < 0.4:
        name, expr, pre_cost = ops.draw_unary(rng, "h")
        body.append(f"h = {expr}")
        graph.append(name)
        pre = f" of {name}(x)"
    body.append("h = " + REDUCTIONS[op][0].format(dims=dims, kd=keepdim))
    lines, helpers = wrap_precision(body, dtype, "h", ["x"])
    out = tuple("1" if i in dims else k for i, k in enumerate(full) if keepdim or i not in dims)
    last = rank - 1 in dims
    gpu, cpu = draw_shapes(rng, roles)
    hint = ("Memory bound: read x once with loads coalesced along its contiguous last dim; "
            + ("reduce each row on chip" if last else "accumulate partial results across rows, splitting "
               "the reduction over programs when the output is small"))
    return TaskDraft(
        stem=f"reduce_{op}_{'last' if dims == (rank - 1,) else 'd' + ''.join(map(str, dims))}", family="reduction",
        dtype=dtype, summary=f"The {op}{pre or ' of x'} over dims {dims} of [{', '.join(full)}] (keepdim={keepdim})",
        inputs=(TensorArg("x", full, dtype),), body=tuple(lines), out_dtype=dtype, out_shape=out,
        gpu_shape=gpu, cpu_shapes=cpu, flops=f"{REDUCTIONS[op][1] + pre_cost} * {numel_expr(full)}",
        tags=("row_reduction",) if last else ("coalesced_access",), hint=hint, helpers=helpers,
        layouts=draw_layouts(rng, ("sliced", "offset")), graph=tuple(graph),
    )
