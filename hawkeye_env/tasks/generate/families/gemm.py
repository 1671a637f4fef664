"""GEMM families: a linear layer (``x @ weight^T``, weight a parameter or an input), a batched
GEMM (``a @ b``) and an FP8 GEMM with per-tensor scales, each with an epilogue of up to four of:
bias, activation, residual add, scaling by a constant, and an int8 or FP8 fake-quantization of the
output (per row).

The GEMM runs in the task's dtype with float32 accumulation, as ``torch.nn.Linear`` does; the
epilogue runs in float32 and the output is rounded once. With a quantizing epilogue the product
is computed in float32 (rounding it to bf16 first would move values across quantization steps).
"""

from __future__ import annotations

import random

from hawkeye_env.tasks.generate import ops
from hawkeye_env.tasks.generate.dims import draw_shapes
from hawkeye_env.tasks.generate.draft import Param, TaskDraft, TensorArg
from hawkeye_env.tasks.generate.families.common import LOW_PRECISION, draw_dtype, draw_layouts
from hawkeye_env.tasks.generate.families.quant import QUANTIZERS

EPILOGUES = ("bias", "act", "residual", "scale", "quant")
ALPHAS = (0.5, 0.125, 1.7)


def _epilogue(rng: random.Random) -> list[str]:
    chosen = [e for e in EPILOGUES if rng.random() < (0.2 if e == "quant" else 0.45)]
    return [e for e in EPILOGUES if e in chosen]


def _workset(s: dict) -> float:
    """The GEMM's operands and three float32 ``[M, N]`` epilogue temporaries, per batch."""
    return 4.0 * s.get("B", 1) * (s["M"] * s["K"] + s["K"] * s["N"] + 3 * s["M"] * s["N"])


def _epilogue_lines(epilogue: list[str], low: bool, out: tuple[str, ...], rng: random.Random):
    """(lines, inputs, params, constants, flops per output element, graph) of the epilogue on ``h``."""
    lines, inputs, params, constants, flops, graph = [], [], [], {}, 0, []
    for e in epilogue:
        if e == "bias":
            params.append(Param("bias", ("N",), ""))
            lines.append("h = h + " + ("upcast(self.bias)" if low else "self.bias"))
            flops += 1
        elif e == "act":
            act = rng.choice(sorted(ops.ACTIVATIONS))
            lines.append("h = " + ops.ACTIVATIONS[act][0].format(x="h"))
            flops += ops.ACTIVATIONS[act][1]
            e = f"act_{act}"
        elif e == "residual":
            inputs.append(TensorArg("residual", out, ""))
            lines.append("h = h + " + ("upcast(residual)" if low else "residual"))
            flops += 1
        elif e == "scale":
            constants["ALPHA"] = rng.choice(ALPHAS)
            lines.append("h = h * ALPHA")
            flops += 1
        else:
            quant = rng.choice(("int8_row", "fp8_row"))
            lines += QUANTIZERS[quant]("h", "-1")
            flops += 4
            e = f"quant_{quant}"
        graph.append(e)
    return lines, inputs, params, constants, flops, graph


def draw_gemm(rng: random.Random) -> TaskDraft:
    kind = rng.choice(("linear", "linear", "matmul", "bmm", "fp8"))
    dtype = "bfloat16" if kind == "fp8" else draw_dtype(rng)
    low = dtype in LOW_PRECISION or kind == "fp8"
    epilogue = _epilogue(rng)
    quant = "quant" in epilogue
    batched = kind == "bmm"
    out = ("B", "M", "N") if batched else ("M", "N")
    up = (lambda t: f"upcast({t})") if (quant and low) else (lambda t: t)
    if kind == "linear":
        inputs, params, product = [TensorArg("x", ("M", "K"), dtype)], [Param("weight", ("N", "K"), dtype)], \
            f"{up('x')} @ {up('self.weight')}.t()"
    elif kind == "matmul":
        inputs, params, product = [TensorArg("a", ("M", "K"), dtype), TensorArg("b", ("K", "N"), dtype)], [], \
            f"{up('a')} @ {up('b')}"
    elif kind == "bmm":
        inputs, params, product = [TensorArg("a", ("B", "M", "K"), dtype), TensorArg("b", ("B", "K", "N"), dtype)], \
            [], f"{up('a')} @ {up('b')}"
    else:
        inputs = [TensorArg("a", ("M", "K"), "float8_e4m3fn"), TensorArg("w", ("N", "K"), "float8_e4m3fn"),
                  TensorArg("scale_a", ("1",), "float32"), TensorArg("scale_w", ("1",), "float32")]
        params, product = [], "(upcast(a) * scale_a) @ (upcast(w) * scale_w).t()"
    lines, extra_in, extra_p, constants, flops, graph = _epilogue_lines(epilogue, low, out, rng)
    extra_in = [TensorArg(t.name, t.shape, dtype) for t in extra_in]
    extra_p = [Param(p.name, p.shape, dtype) for p in extra_p]
    if kind == "fp8" or (low and lines and not quant):
        body = [f"h = upcast({product})" if kind != "fp8" else f"h = {product}", *lines]
        body.append(f"return downcast(h, torch.{dtype})")
    else:
        body = [f"h = {product}", *lines, f"return downcast(h, torch.{dtype})" if low else "return h"]
    helpers = ("upcast", "downcast") if low else ()
    roles = {"M": "rows", "N": "cols", "K": "inner"} | ({"B": "batch"} if batched else {})
    gpu, cpu = draw_shapes(rng, roles, _workset)
    b = "B * " if batched else ""
    decode = gpu["M"] <= 64 and gpu["K"] >= 2048
    tags = ("fp8_gemm", "tiled_mma") if kind == "fp8" else ("tiled_mma",)
    tags += ("epilogue_fusion",) if epilogue else ("grouped_tile_order", "software_pipelining")
    tags += ("split_k",) if decode else ()
    return TaskDraft(
        stem=f"{kind}_{'_'.join(g.split('_')[0] for g in graph) or 'plain'}", family="gemm", dtype=dtype,
        summary=(f"{'Batched GEMM' if batched else 'FP8 GEMM' if kind == 'fp8' else 'GEMM'} "
                 f"{product.replace('upcast(', '').replace(')', '')} with epilogue "
                 f"{', '.join(graph) or 'none'}"),
        inputs=(*inputs, *extra_in), params=(*params, *extra_p),
        init_keys=tuple(dict.fromkeys(k for p in (*params, *extra_p) for k in p.shape)), body=tuple(body),
        out_dtype=dtype, out_shape=out, gpu_shape=gpu, cpu_shapes=cpu,
        flops=f"{b}M * N * (2.0 * K + {flops})", tags=tags,
        hint=("Tile the GEMM with float32 accumulation and fuse the epilogue, so the product never "
              "round-trips through DRAM" if epilogue else "Tile the GEMM for the tensor cores with float32 "
              "accumulation") + (" (M is small: split K across programs)" if decode else ""),
        constants=constants, helpers=helpers,
        layouts=() if kind == "fp8" else draw_layouts(rng, ("transposed", "sliced", "offset")),
        distributions=("normal", "uniform") if kind == "fp8" else ("normal", "uniform", "heavy_tailed"),
        graph=(kind, *graph),
    )
