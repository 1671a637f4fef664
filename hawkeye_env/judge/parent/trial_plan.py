"""The correctness trials of one verdict, planned by the trusted parent before the worker starts."""

from __future__ import annotations

import random

from hawkeye_env.judge.parent.decide import kernelbench_protocol
from hawkeye_env.judge.parent.hidden_shapes import hidden_shapes
from hawkeye_env.judge.shared.inputs import derived_seed
from hawkeye_env.tasks.spec import TaskSpec

# The span of a repeat trial's run of calls with state carried (``carried_calls``): the run's length
# is log-uniform below it. On CPU every call is an interpreted replay of the plan (tenths of a
# second at the CPU shapes), so the run stays short (0.71 added calls a verdict on average); on
# CUDA a call at the timed shape is milliseconds (13.7 added calls on average, 62 at most).
CARRIED_SPAN = {"cpu": 4, "cuda": 64}

# The judge's protocols (``EvalConfig.protocol``): hawkeye's trials alone, or also KernelBench's.
PROTOCOLS = ("hawkeye", kernelbench_protocol.PROTOCOL)


def _smallest(spec: TaskSpec) -> dict:
    shapes = spec.cpu_shapes or spec.gpu_shapes
    return dict(min(shapes, key=lambda s: (spec.bytes_moved(**s), spec.flops(**s))))


def envelope_trials(spec: TaskSpec, device: str, seed: int) -> list[tuple[dict, str, dict | None, bool]]:
    """(shape, distribution, layout, hidden) of the trials beyond the public shapes: each hidden
    shape (``hidden_shapes``) with a distribution drawn from the task's; one trial in a layout
    drawn from ``spec.layouts`` at the smallest public shape (one that changes strides where the
    task has one: every layout is at a storage offset too, ``layouts.py``); one trial per extra value
    distribution at the timed shape on CUDA, one drawn from them at the smallest public CPU shape
    on CPU."""
    rng = random.Random(derived_seed(seed, "trial-envelope"))
    dists = spec.distributions
    out = [(s, rng.choice(dists), None, True) for s in hidden_shapes(spec, device, seed)]
    strided = [x for x in spec.layouts if x != "offset"] or list(spec.layouts)
    if strided:
        out.append((_smallest(spec), rng.choice(dists), {"name": rng.choice(strided)}, False))
    extra = spec.extra_distributions()
    if device == "cpu" and extra:  # one per verdict, drawn from its seed: the interpreter is slow
        extra = (rng.choice(extra),)
    at = _smallest(spec) if device == "cpu" else dict(spec.gpu_shapes[0])
    out += [(at, d, None, False) for d in extra]
    return out


def _public(spec: TaskSpec, device: str) -> list[tuple[dict, str, None, bool]]:
    """(shape, distribution) of the public trials: on CPU every CPU shape and every distribution
    at least once (cycled together: the interpreter is slow, and hidden shapes add more); on CUDA
    each odd CPU shape once and the first GPU shape with every distribution."""
    dists = spec.distributions
    if device == "cpu":
        shapes = spec.cpu_shapes
        return [(dict(shapes[i % len(shapes)]), dists[i % len(dists)], None, False)
                for i in range(max(len(shapes), len(dists)))]
    pairs = [(dict(s), dists[i % len(dists)], None, False) for i, s in enumerate(spec.cpu_shapes)]
    return pairs + [(dict(spec.gpu_shapes[0]), d, None, False) for d in dists]


def carried_calls(device: str, seed: int) -> int:
    """How many unchecked calls, with the state each leaves carried to the next, a repeat trial makes
    between its first call and its checked call on fresh inputs: ``floor(span ** u) - 1`` for ``u``
    uniform in [0, 1) drawn from the verdict's seed (``CARRIED_SPAN``), so the checked call is the
    candidate's ``n``-th call on that plan with ``P(n >= m) = 1 - log(m - 1) / log(span)`` for
    ``m >= 2``. A kernel that counts its calls in device memory and is wrong only over a window of
    them cannot know whether the checked call falls inside it.

    >>> sorted({carried_calls("cpu", s) for s in range(200)})
    [0, 1, 2]
    >>> max(carried_calls("cuda", s) for s in range(2000)) > 40
    True
    """
    u = random.Random(derived_seed(seed, "carried-calls")).random()
    return int(CARRIED_SPAN["cuda" if device == "cuda" else "cpu"] ** u) - 1


def plan_trials(spec: TaskSpec, device: str, seed: int, protocol: str = "hawkeye") -> list[dict]:
    """Correctness trials: the public ones (``_public``), and before the last of those the trials of
    ``envelope_trials``: hidden shapes (``"hidden": True``), one non-contiguous layout, the extra value
    distributions (on CPU one of them, drawn per verdict). Every trial has ``shape``,
    ``distribution``, ``seed``, ``order`` and ``layout`` (None: contiguous; else ``{"name":
    ...}``, ``layouts.py``). Orders alternate,
    candidate first; the last (a repeat trial) makes ``carried`` unchecked calls on other inputs
    with the state each leaves kept (``carried_calls``), then a checked call on fresh inputs, then
    re-runs the candidate on the first inputs with changed state poisoned (determinism). With
    ``protocol`` "kernelbench" KernelBench's trials follow (``kernelbench_protocol.plan``), each
    marked ``"protocol"``. A task without CPU shapes cannot be judged on CPU: ``ValueError`` says
    so (a ``judge_error`` verdict, not the candidate's); so does an unknown ``protocol``."""
    if protocol not in PROTOCOLS:
        raise ValueError(f"unknown protocol {protocol!r}; known: {', '.join(PROTOCOLS)}")
    if device == "cpu" and not spec.cpu_shapes:
        why = spec.no_cpu_reason or "too large for the interpreter"
        raise ValueError(f"task {spec.id} has no CPU shapes ({why}): judge it with --device cuda")
    pairs = _public(spec, device)
    pairs[-1:-1] = envelope_trials(spec, device, seed)
    trials = []
    for i, (s, d, layout, hidden) in enumerate(pairs):
        t = {"shape": s, "distribution": d, "seed": derived_seed(seed, f"trial{i}"),
             "order": "candidate_first" if i % 2 == 0 else "reference_first", "layout": layout}
        if hidden:
            t["hidden"] = True
        trials.append(t)
    trials[-1]["rerun"] = True
    trials[-1]["carried"] = carried_calls(device, seed)
    if protocol == kernelbench_protocol.PROTOCOL:
        trials += kernelbench_protocol.plan(spec, device, seed)
    return trials


__all__ = ["CARRIED_SPAN", "PROTOCOLS", "carried_calls", "envelope_trials", "plan_trials"]
