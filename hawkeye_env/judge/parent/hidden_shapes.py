"""Hidden trial shapes: shapes the task spec does not list, drawn per verdict from its seed.

A verdict checks its task's public shapes and, besides, ``HIDDEN[device]`` shapes drawn from the
task's ``ShapeFamily`` (``TaskSpec.hidden_family``): odd sizes and sizes around block boundaries
(``2^k - 1``, ``2^k``, ``2^k + 1`` in units of the key's ``multiple``), never a public shape, each
within the device's budget (FLOPs and bytes of the largest public CPU shape on CPU, of the first
GPU shape on CUDA), so a CPU verdict stays about as cheap under the interpreter as before.
"""

from __future__ import annotations

import math
import random

from hawkeye_env.judge.shared.inputs import derived_seed
from hawkeye_env.tasks.spec import Dim, TaskSpec

# Hidden shapes per verdict and device. CPU: each costs one interpreter trial of at most the
# largest public CPU shape's work (wall_s per verdict in ``plan.py``'s docstring).
HIDDEN = {"cpu": 1, "cuda": 2}
# Draws per hidden shape before giving up on it; each later draw shrinks the ranges (``_value``).
TRIES = 48
# Chance that a key's draw sits at a block boundary (2^k - 1, 2^k, 2^k + 1) rather than an odd
# value spread log-uniformly over the range.
BOUNDARY_P = 0.5


def _value(dim: Dim, rng: random.Random, shrink: float) -> int:
    if dim.choices:
        return rng.choice(dim.choices)
    m = dim.multiple
    lo, hi = -(-dim.lo // m), dim.hi // m
    hi = max(lo, int(lo + (hi - lo) * shrink))
    if rng.random() < BOUNDARY_P:
        ks = [k for k in range(0, 63) if lo <= 2**k + 1 and 2**k - 1 <= hi]
        if ks:
            u = 2 ** rng.choice(ks) + rng.choice((-1, 0, 1))
            return min(hi, max(lo, u)) * m
    u = int(math.exp(rng.uniform(math.log(lo), math.log(hi + 1))))
    u = min(hi, max(lo, u))
    if u % 2 == 0 and u + 1 <= hi:
        u += 1
    return u * m


def budget(spec: TaskSpec, device: str) -> tuple[float, float]:
    """The most FLOPs and bytes a hidden shape of ``device`` may cost."""
    shapes = spec.cpu_shapes if device == "cpu" else spec.gpu_shapes[:1]
    return (max(spec.flops(**s) for s in shapes), max(spec.bytes_moved(**s) for s in shapes))


def hidden_shapes(spec: TaskSpec, device: str, seed: int, count: int | None = None) -> list[dict]:
    """Up to ``count`` (default ``HIDDEN[device]``) distinct shapes of ``spec``'s family for
    ``device``, none of them public, the same for the same ``seed``; fewer where the family
    leaves too few (a family that varies nothing gives none)."""
    key = "cpu" if device == "cpu" else "cuda"
    count = HIDDEN[key] if count is None else count
    family = spec.hidden_family()
    dims = family.dims(key)
    bases = spec.cpu_shapes if key == "cpu" else spec.gpu_shapes[:1]
    if not dims or not bases or count <= 0:
        return []
    flops, nbytes = budget(spec, key)
    public = [dict(s) for s in (*spec.cpu_shapes, *spec.gpu_shapes)]
    rng = random.Random(derived_seed(seed, f"hidden-shapes-{key}"))
    out: list[dict] = []
    for _ in range(count):
        for attempt in range(TRIES):
            shape = dict(rng.choice(bases))
            shrink = 0.85**attempt
            shape.update({k: _value(d, rng, shrink) for k, d in sorted(dims.items())})
            if shape in public or shape in out:
                continue
            if family.valid is not None and not family.valid(shape):
                continue
            if spec.flops(**shape) > flops or spec.bytes_moved(**shape) > nbytes:
                continue
            out.append(shape)
            break
    return out


def within_family(spec: TaskSpec, device: str, shape: dict) -> bool:
    """Whether ``shape`` is one ``hidden_shapes`` may draw for ``device`` (ignoring the budget)."""
    key = "cpu" if device == "cpu" else "cuda"
    family = spec.hidden_family()
    for k, d in family.dims(key).items():
        v = shape[k]
        if d.choices:
            if v not in d.choices:
                return False
        elif not (d.lo <= v <= d.hi and v % d.multiple == 0):
            return False
    return family.valid is None or bool(family.valid(shape))


__all__ = ["BOUNDARY_P", "HIDDEN", "TRIES", "budget", "hidden_shapes", "within_family"]
