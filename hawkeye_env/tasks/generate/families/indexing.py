"""Gathers, scatters and embeddings.

* ``embedding``: ``table[ids]`` for int64 ids ``[B, T]`` into a ``[V, D]`` table (a parameter),
  optionally scaled by a constant (Gemma's ``sqrt(D)``) and added to a learned position table;
* ``embedding_bag``: the sum or mean of ``table[ids]`` over a bag of ``L`` ids;
* ``gather_rows``: ``x[idx]`` for rows of an input; ``take_along``: ``torch.gather(x, 1, idx)``;
* ``index_add``: rows of ``src`` summed into ``N`` destination rows (``Tensor.index_add``).

Ids repeat (the judge's ``skewed_ids`` trial draws them Zipf-like), so a scatter must combine
colliding rows.
"""

from __future__ import annotations

import random

from hawkeye_env.tasks.generate.dims import draw_shapes
from hawkeye_env.tasks.generate.draft import Param, TaskDraft, TensorArg
from hawkeye_env.tasks.generate.families.common import LOW_PRECISION, draw_dtype, draw_layouts

KINDS = ("embedding", "embedding_bag", "gather_rows", "take_along", "index_add")
SCALES = (8.0, 32.0, 0.5)
HINT = "Memory bound: read each needed row once with coalesced loads along the contiguous dim"


def _workset(s: dict) -> float:
    return 4.0 * (s.get("V", 0) * s.get("D", 1) + 2 * s.get("B", 1) * s.get("T", 1) * s.get("D", 1))


def _embedding(rng: random.Random, dtype: str, low: bool) -> dict:
    extra = rng.choice(("copy", "scale", "position"))
    rows = "upcast(self.table[ids])" if low else "self.table[ids]"
    body = [f"h = {rows}" if extra != "copy" else "return self.table[ids]"]
    params, constants, init = [Param("table", ("V", "D"), dtype)], {}, ("V", "D")
    if extra == "scale":
        constants["SCALE"] = rng.choice(SCALES)
        body.append("h = h * SCALE")
    elif extra == "position":
        params.append(Param("position", ("T", "D"), dtype))
        body.append("h = h + " + ("upcast(self.position)" if low else "self.position"))
        init = ("V", "T", "D")
    return dict(roles={"B": "batch", "T": "seq", "V": "vocab", "D": "cols"},
                inputs=(TensorArg("ids", ("B", "T"), "int64", kind="index", high="V"),), params=tuple(params),
                init_keys=init, body=body, out=("B", "T", "D"), constants=constants, copy=extra == "copy",
                bytes="8 * B * T + {b} * B * T * D + {b} * D" + (" + {b} * T * D" if extra == "position" else ""),
                graph=extra)


def _embedding_bag(rng: random.Random, dtype: str, low: bool) -> dict:
    mode = rng.choice(("sum", "mean"))
    rows = "upcast(self.table[ids])" if low else "self.table[ids]"
    return dict(roles={"B": "rows", "L": "small", "V": "vocab", "D": "cols"},
                inputs=(TensorArg("ids", ("B", "L"), "int64", kind="index", high="V"),),
                params=(Param("table", ("V", "D"), dtype),), init_keys=("V", "D"),
                body=[f"h = {rows}.{mode}(dim=1)"], out=("B", "D"), constants={}, copy=False,
                bytes="8 * B * L + {b} * B * D + {b} * D", graph=mode)


def _rows(rng: random.Random, dtype: str, low: bool, kind: str) -> dict:
    if kind == "gather_rows":
        return dict(roles={"N": "vocab", "M": "rows", "D": "cols"},
                    inputs=(TensorArg("x", ("N", "D"), dtype), TensorArg("idx", ("M",), "int64", "index", "N")),
                    params=(), init_keys=(), body=["return x[idx]"], out=("M", "D"), constants={}, copy=True,
                    bytes="8 * M + {b} * M * D + {b} * D", graph="rows")
    if kind == "take_along":
        return dict(roles={"M": "rows", "N": "cols", "K": "small"},
                    inputs=(TensorArg("x", ("M", "N"), dtype), TensorArg("idx", ("M", "K"), "int64", "index", "N")),
                    params=(), init_keys=(), body=["return torch.gather(x, 1, idx)"], out=("M", "K"), constants={},
                    copy=True, bytes="8 * M * K + {b} * M * K", graph="along")
    return dict(roles={"M": "rows", "N": "vocab", "D": "cols"},
                inputs=(TensorArg("src", ("M", "D"), dtype), TensorArg("idx", ("M",), "int64", "index", "N")),
                params=(), init_keys=("N",), init_lines=("self.rows = N",),
                body=["src = upcast(src)"] * low + ["h = torch.zeros(self.rows, src.shape[1], dtype=src.dtype, "
                                                   "device=src.device)", "h = h.index_add(0, idx, src)"],
                out=("N", "D"), constants={}, copy=False,
                bytes=None, graph="index_add")


def draw_indexing(rng: random.Random) -> TaskDraft:
    dtype, kind = draw_dtype(rng), rng.choice(KINDS)
    low = dtype in LOW_PRECISION
    d = (_embedding(rng, dtype, low) if kind == "embedding" else _embedding_bag(rng, dtype, low)
         if kind == "embedding_bag" else _rows(rng, dtype, low, kind))
    body = list(d["body"])
    if not body[-1].startswith("return"):
        body.append(f"return downcast(h, torch.{dtype})" if low else "return h")
    helpers = ("upcast", "downcast") if low and any("upcast" in line for line in body) else ()
    gpu, cpu = draw_shapes(rng, d["roles"], _workset)
    size = {"float32": 4}.get(dtype, 2)
    return TaskDraft(
        stem=f"{kind}_{d['graph']}" if kind == "embedding" else kind, family="indexing", dtype=dtype,
        summary=f"{kind.replace('_', ' ').capitalize()} ({d['graph']}) into [{', '.join(d['out'])}]",
        inputs=d["inputs"], params=d["params"], init_keys=d["init_keys"], init_lines=d.get("init_lines", ()),
        body=tuple(body), out_dtype=dtype, out_shape=d["out"], gpu_shape=gpu, cpu_shapes=cpu,
        flops=" * ".join(d["out"]), bytes_moved=(d["bytes"] or "").format(b=size), tags=("coalesced_access",),
        hint=HINT + ("; colliding ids must add up (atomics or a sort by destination)" if kind == "index_add" else ""),
        constants=d["constants"], helpers=helpers, answer_is_copy=d["copy"],
        value_distributions=("zeros", "repeated", "skewed_ids"),
        layouts=draw_layouts(rng, ("offset",)), graph=("indexing", kind, d["graph"]),
    )
