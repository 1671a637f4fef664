"""Trials as the judge builds them, for the gates: the reference model and inputs of one shape,
distribution and seed, its native and float64 outputs, and the comparison rule.

Everything here is the judge's own (``references.build``, ``reference64``, ``native_reference``,
``correctness.compare``), so a gate's verdict on a reference is the one every candidate's verdict
would rest on.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from hawkeye_env.judge.parent.decide.correctness import compare, dtype_name, is_near_constant
from hawkeye_env.judge.parent.decide.references import as_list, build, native_reference, reference64
from hawkeye_env.judge.parent.hidden_shapes import hidden_shapes
from hawkeye_env.tasks.spec import DISTRIBUTIONS, TaskSpec

__all__ = ["DISTRIBUTIONS", "Outputs", "compare", "dtype_name", "gate_shapes", "hidden_shapes",
           "is_near_constant", "run_trial", "trial_distributions"]


@dataclass
class Outputs:
    """One trial's inputs, native outputs (the reference in its own precision) and float64 reference."""

    inputs: list
    native: list[torch.Tensor]
    reference: list[torch.Tensor]


def run_trial(spec: TaskSpec, shape: dict, distribution: str, seed: int) -> Outputs:
    """The trial ``(shape, distribution, seed)`` on CPU, built as every judge process builds it."""
    model, inputs = build(spec, dict(shape), distribution, seed, "cpu")
    native = native_reference(model, inputs)
    with torch.no_grad():
        reference = reference64(model, inputs, keep_float64=spec.dtypes == ("float64",))
    return Outputs(inputs, native, as_list(reference))


def gate_shapes(spec: TaskSpec, seed: int) -> list[dict]:
    """The public CPU shapes and one hidden CPU shape the judge may draw for ``seed``."""
    return [dict(s) for s in spec.cpu_shapes] + hidden_shapes(spec, "cpu", seed, count=1)


def trial_distributions(spec: TaskSpec) -> tuple[str, ...]:
    """Every distribution a verdict of ``spec`` draws inputs from."""
    return (*spec.distributions, *spec.extra_distributions())
