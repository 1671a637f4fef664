"""Softmax and log-softmax: over the last dim of ``[M, N]`` or dim 1 of ``[B, C, L]``, plain,
scaled by a constant, with an added bias row, masked by a bool input, or causally masked scores
``[B, H, S, S]`` (the mask built in ``forward``).

A masked log-softmax writes 0 where the mask drops a position (its log-probability is -inf, which
no tolerance can compare); every mask keeps column 0, so no row is empty.
"""

from __future__ import annotations

import random

from hawkeye_env.tasks.generate.dims import draw_shapes
from hawkeye_env.tasks.generate.draft import Param, TaskDraft, TensorArg
from hawkeye_env.tasks.generate.families.common import LOW_PRECISION, draw_dtype, draw_layouts, wrap_precision

SCALES = (0.125, 0.0884, 0.5, 2.0)
VARIANTS = ("plain", "scaled", "bias", "masked", "causal", "channel")


def _layout(variant: str) -> tuple[dict, tuple[str, ...], int]:
    if variant == "causal":
        return {"B": "batch", "H": "small", "S": "seq"}, ("B", "H", "S", "S"), -1
    if variant == "channel":
        return {"B": "batch", "C": "cols", "L": "small"}, ("B", "C", "L"), 1
    return {"M": "rows", "N": "cols"}, ("M", "N"), -1


def draw_softmax(rng: random.Random) -> TaskDraft:
    dtype, variant = draw_dtype(rng), rng.choice(VARIANTS)
    log = rng.random() < 0.4
    fn = "torch.log_softmax" if log else "torch.softmax"
    roles, shape, dim = _layout(variant)
    low = dtype in LOW_PRECISION
    inputs, params, body, constants = [TensorArg("x", shape, dtype)], (), [], {}
    if variant == "scaled":
        constants["SCALE"] = rng.choice(SCALES)
        body.append("h = h * SCALE")
    elif variant == "bias":
        params = (Param("bias", ("N",), dtype),)
        body.append("h = h + " + ("upcast(self.bias)" if low else "self.bias"))
    elif variant == "masked":
        inputs.append(TensorArg("mask", shape, "bool", kind="mask", keep=rng.choice((0.3, 0.5, 0.8))))
        body.append('h = h.masked_fill(~mask, float("-inf"))')
    elif variant == "causal":
        body += ["keep = torch.ones(h.shape[-2], h.shape[-1], dtype=torch.bool, device=h.device).tril()",
                 'h = h.masked_fill(~keep, float("-inf"))']
    body.append(f"h = {fn}(h, dim={dim})")
    if log and variant in ("masked", "causal"):
        body.append(f"h = h.masked_fill(~{'mask' if variant == 'masked' else 'keep'}, 0.0)")
    lines, helpers = wrap_precision(body, dtype, "h", ["x"])
    gpu, cpu = draw_shapes(rng, roles)
    row = dim == -1
    return TaskDraft(
        stem=f"{'log' if log else ''}softmax_{variant}", family="softmax", dtype=dtype,
        summary=f"{'Log-softmax' if log else 'Softmax'} over dim {dim} of [{', '.join(shape)}] ({variant})",
        inputs=tuple(inputs), params=params, init_keys=("N",) if params else (), body=tuple(lines),
        out_dtype=dtype, out_shape=shape, gpu_shape=gpu, cpu_shapes=cpu,
        flops=f"5 * {' * '.join(f'({d})' for d in shape)}",
        tags=("online_softmax", "row_reduction") if row else ("coalesced_access",),
        hint=("Memory bound: one pass per row with an online max and sum, subtracting the max before exp"
              if row else "Memory bound: reduce across channels with loads coalesced along L"),
        constants=constants, helpers=helpers, layouts=draw_layouts(rng, ("sliced", "offset")),
        value_distributions=("zeros", "repeated", "large"),
        # Logits of +-1e4 (1e3 in fp16, whose log-probabilities would pass its 6.5e4 range): exp
        # without max subtraction overflows (exp(89) already does in float32).
        large_magnitude=1e3 if dtype == "float16" else 1e4, graph=("softmax", variant, str(log), str(dim)),
    )
