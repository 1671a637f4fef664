"""Quantize-dequantize (fake quantization): symmetric int8 per row, per tensor or per group of the
last dim, and FP8 (e4m3 per row or per tensor, e5m2 per tensor), the output dequantized in the
input's dtype.

Scales are ``amax / qmax`` (127 for int8, 448 for e4m3, 57344 for e5m2) with ``amax`` clamped
away from zero, so all-zero rows stay finite. int8 rounds half to even (``torch.round``); FP8
rounds by the cast.
"""

from __future__ import annotations

import random

from hawkeye_env.tasks.generate.dims import draw_shapes
from hawkeye_env.tasks.generate.draft import TaskDraft, TensorArg
from hawkeye_env.tasks.generate.families.common import draw_dtype, draw_layouts, wrap_precision

# Smallest amax a scale is computed from: an all-zero row quantizes to zeros, not NaN.
AMAX_FLOOR = 1e-8


def _int8(x: str, dims: str) -> list[str]:
    return [f"scale = {x}.abs().amax(dim={dims}, keepdim=True).clamp_min({AMAX_FLOOR}) / 127.0",
            f"{x} = torch.round({x} / scale).clamp(-127, 127) * scale"]


def _fp8(x: str, dims: str, fmt: str = "float8_e4m3fn", qmax: float = 448.0) -> list[str]:
    return [f"scale = {x}.abs().amax(dim={dims}, keepdim=True).clamp_min({AMAX_FLOOR}) / {qmax}",
            f"{x} = ({x} / scale).to(torch.{fmt}).to({x}.dtype) * scale"]


# name -> lines quantizing and dequantizing the float32 tensor named x over dims (an expression)
QUANTIZERS = {
    "int8_row": lambda x, dims: _int8(x, dims),
    "fp8_row": lambda x, dims: _fp8(x, dims),
}
SCHEMES = ("int8_row", "int8_tensor", "int8_group", "fp8_row", "fp8_tensor", "fp8e5m2_tensor")


def draw_quant(rng: random.Random) -> TaskDraft:
    dtype = draw_dtype(rng)
    # An int8 grid (steps of amax / 127) is finer than bf16's 2^-8 relative tolerance: the input
    # itself would pass as the answer, so bf16 tasks quantize to FP8 only.
    scheme = rng.choice([s for s in SCHEMES if dtype != "bfloat16" or s.startswith("fp8")])
    roles = {"M": "rows", "N": "cols"}
    shape = ("M", "N")
    if scheme == "int8_group":
        roles, shape = {"M": "rows", "NG": "small", "GS": "small"}, ("M", "NG * GS")
    body = []
    dims = "-1" if scheme.endswith(("row", "group")) else "(0, 1)"
    if scheme == "int8_group":
        body.append("g = h.unflatten(-1, (-1, self.group_size))")
        body += _int8("g", "-1") + ["h = g.flatten(-2)"]
    elif scheme.startswith("int8"):
        body += _int8("h", dims)
    elif scheme == "fp8e5m2_tensor":
        body += _fp8("h", dims, "float8_e5m2", 57344.0)
    else:
        body += _fp8("h", dims)
    lines, helpers = wrap_precision(body, dtype, "h", ["x"])
    gpu, cpu = draw_shapes(rng, roles)
    group = scheme == "int8_group"
    return TaskDraft(
        stem=f"quant_{scheme}", family="quantization", dtype=dtype,
        summary=f"Fake-quantize x [{', '.join(shape)}] to {scheme.replace('_', ' ')} symmetric scales and back",
        inputs=(TensorArg("x", shape, dtype),), init_keys=("GS",) if group else (),
        init_lines=("self.group_size = GS",) if group else (), body=tuple(lines), out_dtype=dtype,
        out_shape=shape, gpu_shape=gpu, cpu_shapes=cpu, flops=f"5 * {' * '.join(f'({d})' for d in shape)}",
        tags=("row_reduction", "coalesced_access"),
        hint=("Memory bound: one pass per row (amax on chip, then scale and round)" if dims == "-1" else
              "Two passes: a global amax (a reduction across programs), then scale and round"),
        helpers=helpers, layouts=draw_layouts(rng, ("sliced", "offset")), graph=("quant", scheme),
    )
