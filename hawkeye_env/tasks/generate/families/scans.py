"""Scans and gated recurrences over a sequence dim.

Scans: ``cumsum`` (inclusive or exclusive, forward or reversed), ``logcumsumexp`` and ``cummax``
over the last dim of ``[M, N]`` or the time dim of ``[B, T, D]``, optionally after a pointwise map.
Recurrences over ``[B, T, D]``, written as the loop over time they are defined by:

* ``gated``: ``a = sigmoid(g)``, ``h_t = a_t * h_{t-1} + (1 - a_t) * x_t`` (a minimal gated RNN,
  minGRU/HGRN-like), optionally gated out by ``silu(z)``;
* ``decay``: ``h_t = sigmoid(decay) * h_{t-1} + x_t`` with a learned per-channel decay (an EMA /
  diagonal linear recurrence, S4D/LRU-like).
"""

from __future__ import annotations

import random

from hawkeye_env.tasks.generate import ops
from hawkeye_env.tasks.generate.dims import draw_shapes
from hawkeye_env.tasks.generate.draft import Param, TaskDraft, TensorArg
from hawkeye_env.tasks.generate.families.common import LOW_PRECISION, draw_dtype, draw_layouts, wrap_precision

SCANS = {"cumsum": "h.cumsum(dim={d})", "logcumsumexp": "torch.logcumsumexp(h, dim={d})",
         "cummax": "h.cummax(dim={d}).values"}
LOOP = ["y = torch.empty_like(x)", "state = torch.zeros_like(x[:, 0])", "for t in range(x.shape[1]):"]


def draw_scan(rng: random.Random) -> TaskDraft:
    dtype, op = draw_dtype(rng), rng.choice(sorted(SCANS))
    rank3 = rng.random() < 0.5
    roles, shape, dim = ({"B": "batch", "T": "seq", "D": "cols"}, ("B", "T", "D"), 1) if rank3 else \
        ({"M": "rows", "N": "cols"}, ("M", "N"), -1)
    reverse = rng.random() < 0.3
    exclusive = op == "cumsum" and rng.random() < 0.3
    body, graph = [], ["scan", op, str(dim), str(reverse), str(exclusive)]
    if rng.random() < 0.4:
        name, expr, _ = ops.draw_unary(rng, "h")
        body.append(f"h = {expr}")
        graph.append(name)
    if reverse:
        body.append(f"h = h.flip({dim})")
    body.append("h = " + (f"h.cumsum(dim={dim}) - h" if exclusive else SCANS[op].format(d=dim)))
    if reverse:
        body.append(f"h = h.flip({dim})")
    lines, helpers = wrap_precision(body, dtype, "h", ["x"])
    gpu, cpu = draw_shapes(rng, roles)
    words = " ".join(x for x in ("exclusive" if exclusive else "", "reversed" if reverse else "", op) if x)
    return TaskDraft(
        stem=f"scan_{op}{'_rev' if reverse else ''}{'_excl' if exclusive else ''}", family="scan", dtype=dtype,
        summary=f"A {words} over dim {dim} of [{', '.join(shape)}]", inputs=(TensorArg("x", shape, dtype),),
        body=tuple(lines), out_dtype=dtype, out_shape=shape, gpu_shape=gpu, cpu_shapes=cpu,
        flops=f"{4 if op == 'logcumsumexp' else 1} * {' * '.join(shape)}",
        tags=("row_reduction",) if dim == -1 else ("chunked_scan",),
        hint="Memory bound: scan blocks in parallel (tl.associative_scan) and carry each block's total into the next",
        helpers=helpers, layouts=draw_layouts(rng, ("sliced", "offset")), graph=tuple(graph),
    )


def draw_recurrence(rng: random.Random) -> TaskDraft:
    dtype, kind = draw_dtype(rng), rng.choice(("gated", "decay"))
    low = dtype in LOW_PRECISION
    shape = ("B", "T", "D")
    gated_out = kind == "gated" and rng.random() < 0.4
    inputs, params = [TensorArg("x", shape, dtype)], []
    if kind == "gated":
        inputs.append(TensorArg("g", shape, dtype))
        step = ["    a = torch.sigmoid(g[:, t])", "    state = a * state + (1 - a) * x[:, t]"]
    else:
        params.append(Param("decay", ("D",), dtype))
        step = ["    state = a * state + x[:, t]"]
    body = ([] if kind == "gated" else ["a = torch.sigmoid(" + ("upcast(self.decay))" if low else "self.decay)")])
    body += LOOP + step + ["    y[:, t] = state"]
    if gated_out:
        inputs.append(TensorArg("z", shape, dtype))
        body.append("y = y * F.silu(z)")
    lines, helpers = wrap_precision(body, dtype, "y", [t.name for t in inputs], start="")
    gpu, cpu = draw_shapes(rng, {"B": "batch", "T": "seq", "D": "cols"})
    return TaskDraft(
        stem=f"recurrence_{kind}{'_gatedout' if gated_out else ''}", family="scan", dtype=dtype,
        summary=(f"A {kind} linear recurrence over time (dim 1 of [B, T, D]), state 0 at t = 0"
                 + (", gated out by silu(z)" if gated_out else "")),
        inputs=tuple(inputs), params=tuple(params), init_keys=("D",) if params else (), body=tuple(lines),
        out_dtype=dtype, out_shape=shape, gpu_shape=gpu, cpu_shapes=cpu, flops=f"{3 + 5 * gated_out} * B * T * D",
        tags=("chunked_scan",),
        hint=("The recurrence is linear in the state: compute it as a parallel scan over time (chunks of T "
              "with a carried state, or tl.associative_scan on (a, b) pairs), channels in parallel"),
        helpers=helpers, layouts=draw_layouts(rng, ("offset",)), graph=("recurrence", kind, str(gated_out)),
    )
