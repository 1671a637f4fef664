"""Elementwise families: chains of pointwise maps with broadcast operands, and gated activations.

A chain starts from ``x`` (``[M, N]`` or ``[B, T, C]``) and applies two to five steps, each a
unary map (``ops.UNARY``) or a binary one (``ops.BINARY``) with an extra operand broadcast along
some dims: a row vector ``[N]`` (an input or a parameter, like a bias), a column ``[M, 1]``, a
per-batch ``[B, 1, C]`` or a full tensor. A gated activation (GLU family: SwiGLU, GeGLU,
ReGLU) splits ``x = [gate | up]`` and returns ``act(gate) * up``.
"""

from __future__ import annotations

import random

from hawkeye_env.tasks.generate import ops
from hawkeye_env.tasks.generate.counts import numel_expr
from hawkeye_env.tasks.generate.dims import draw_shapes
from hawkeye_env.tasks.generate.draft import Param, TaskDraft, TensorArg
from hawkeye_env.tasks.generate.families.common import LOW_PRECISION, draw_dtype, draw_layouts, wrap_precision

MEMORY_HINT = "Memory bound: read each input once and write the output once, in one kernel"
# rank -> (shape keys and roles, full shape, broadcast patterns of an extra operand)
RANKS = {
    2: ({"M": "rows", "N": "cols"}, ("M", "N"), {"row": ("N",), "col": ("M", "1"), "full": ("M", "N")}),
    3: ({"B": "batch", "T": "seq", "C": "cols"}, ("B", "T", "C"),
        {"row": ("C",), "col": ("B", "T", "1"), "batch": ("B", "1", "C"), "full": ("B", "T", "C")}),
}


def _operand(rng: random.Random, i: int, dtype: str, patterns: dict) -> TensorArg | Param:
    pattern = rng.choice(sorted(patterns))
    if pattern == "row" and rng.random() < 0.5:
        return Param(f"w{i}", patterns[pattern], dtype)
    return TensorArg(f"y{i}", patterns[pattern], dtype)


def draw_chain(rng: random.Random) -> TaskDraft:
    """An elementwise chain with 0-2 broadcast operands."""
    dtype = draw_dtype(rng)
    roles, full, patterns = RANKS[rng.choice(sorted(RANKS))]
    extras = [_operand(rng, i, dtype, patterns) for i in range(rng.choice((0, 1, 1, 2)))]
    steps = ["unary"] * rng.randint(max(1, 2 - len(extras)), 3) + ["binary"] * len(extras)
    rng.shuffle(steps)
    low = dtype in LOW_PRECISION
    body, names, words, flops, operands = [], [], [], 0, iter(extras)
    for step in steps:
        if step == "unary":
            name, expr, cost = ops.draw_unary(rng, "h")
            words.append(name)
        else:
            extra = next(operands)
            ref = f"self.{extra.name}" if isinstance(extra, Param) else extra.name
            ref = f"upcast({ref})" if low and isinstance(extra, Param) else ref
            name = rng.choice(sorted(ops.BINARY))
            expr, cost = ops.apply_binary(name, "h", ref), ops.BINARY[name][1]
            words.append(f"{name} with {extra.name} [{', '.join(extra.shape)}]")
            name = f"{name}_{'param' if isinstance(extra, Param) else 'in'}"
        body.append(f"h = {expr}")
        names.append(name)
        flops += cost
    inputs = (TensorArg("x", full, dtype), *(e for e in extras if isinstance(e, TensorArg)))
    params = tuple(e for e in extras if isinstance(e, Param))
    upcasts = [t.name for t in inputs]
    lines, helpers = wrap_precision(body, dtype, "h", upcasts)
    gpu, cpu = draw_shapes(rng, roles)
    init_keys = tuple(dict.fromkeys(k for p in params for k in p.shape))
    return TaskDraft(
        stem="ew_" + "_".join(n.split("_")[0] for n in names), family="elementwise", dtype=dtype,
        summary=f"Elementwise chain on x [{', '.join(full)}]: {', then '.join(words)}",
        inputs=inputs, params=params, init_keys=init_keys, body=tuple(lines), out_dtype=dtype, out_shape=full,
        gpu_shape=gpu, cpu_shapes=cpu, flops=f"{flops} * {numel_expr(full)}", tags=("coalesced_access",),
        hint=MEMORY_HINT + " (broadcast operands are read once per tile, not per element)", helpers=helpers,
        layouts=draw_layouts(rng), graph=("chain", *names),
    )


def draw_glu(rng: random.Random) -> TaskDraft:
    """A gated activation ``act(gate) * up`` on ``x = [gate | up]`` or on two inputs."""
    dtype = draw_dtype(rng)
    act = rng.choice(sorted(ops.ACTIVATIONS))
    split = rng.random() < 0.5
    low = dtype in LOW_PRECISION
    expr = ops.ACTIVATIONS[act][0].format(x="gate") + " * up"
    if split:
        inputs = (TensorArg("x", ("M", "2 * N"), dtype),)
        body = ["gate, up = x.chunk(2, dim=-1)", f"h = {expr}"]
        summary = f"Gated activation {expr} with gate, up = x.chunk(2, dim=-1)"
    else:
        inputs = (TensorArg("gate", ("M", "N"), dtype), TensorArg("up", ("M", "N"), dtype))
        body = [f"h = {expr}"]
        summary = f"Gated activation {expr}"
    lines, helpers = wrap_precision(body, dtype, "h", [t.name for t in inputs], start="")
    gpu, cpu = draw_shapes(rng, {"M": "rows", "N": "cols"})
    return TaskDraft(
        stem=f"glu_{act}", family="elementwise", dtype=dtype, summary=summary, inputs=inputs, body=tuple(lines),
        out_dtype=dtype, out_shape=("M", "N"), gpu_shape=gpu, cpu_shapes=cpu,
        flops=f"{ops.ACTIVATIONS[act][1] + 1} * M * N", tags=("coalesced_access",), hint=MEMORY_HINT,
        helpers=helpers if low else (), layouts=draw_layouts(rng), graph=("glu", act, "split" if split else "two"),
    )
