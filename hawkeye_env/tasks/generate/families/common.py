"""What every family of the grammar draws alike: the dtype, the float32 round trip of low-precision
tasks, the input layouts and a name for a tensor of a given broadcast pattern.

    >>> wrap_precision(["h = h * 2"], "bfloat16", "h", ["x"])
    (['x = upcast(x)', 'h = x', 'h = h * 2', 'return downcast(h, torch.bfloat16)'], ('upcast', 'downcast'))
"""

from __future__ import annotations

import random

from hawkeye_env.tasks.spec import LAYOUTS

# Dtype mix of generated tasks: bf16 most (what models train and serve in), fp32 and fp16 besides.
FLOAT_DTYPES = ("bfloat16", "bfloat16", "float32", "float16")
LOW_PRECISION = ("bfloat16", "float16")


def draw_dtype(rng: random.Random, choices: tuple[str, ...] = FLOAT_DTYPES) -> str:
    return rng.choice(choices)


def draw_layouts(rng: random.Random, allowed: tuple[str, ...] = LAYOUTS) -> tuple[str, ...]:
    """No, one or two of ``allowed`` (kept in ``LAYOUTS``' order)."""
    chosen = set(rng.sample(allowed, rng.choice((0, 1, 1, 2)) if len(allowed) > 1 else rng.choice((0, 1))))
    return tuple(x for x in LAYOUTS if x in chosen)


def wrap_precision(body: list[str], dtype: str, result: str, upcast: list[str],
                   start: str = "h") -> tuple[list[str], tuple[str, ...]]:
    """``body`` preceded by the upcast of the tensors named in ``upcast`` (the first becomes
    ``start``) and followed by the return of ``result``, rounded to ``dtype`` when it is a
    low-precision dtype; returns ``(lines, helpers)``."""
    low = dtype in LOW_PRECISION
    head = [f"{name} = upcast({name})" for name in upcast] if low else []
    if start and upcast and start != upcast[0]:
        head.append(f"{start} = {upcast[0]}")
    tail = [f"return downcast({result}, torch.{dtype})" if low else f"return {result}"]
    return head + list(body) + tail, (("upcast", "downcast") if low else ())
