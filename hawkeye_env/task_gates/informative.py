"""Gate: the reference's outputs tell a right answer from a degenerate one.

On every gate shape and base distribution (normal, uniform, heavy-tailed), each output ``r`` (the
float64 reference, ``n`` the native one, ``tol`` the task's tolerance for its dtype):

* ``r`` is not near constant (``correctness.is_near_constant``);
* the native output is within the tolerance's fixed floors (``compare(n, r)`` without calibration:
  the tolerance suits the task's dtype);
* on the first gate shape, under the judge's own rule (calibrated by ``n``), each degenerate answer
  fails: all zeros, the
  mean of ``r`` everywhere, any input of the output's shape passed through, the native output
  rounded to a lower precision (float32 -> bfloat16, 16-bit -> FP8 e4m3), and the reference of
  other inputs (a second seed): an output that does not depend on its inputs passes that one.

Reason codes: ``near_constant``, ``no_tolerance``, ``native_outside_tolerance``, ``zeros_pass``, ``constant_pass``,
``passthrough_pass``, ``lower_precision_pass``, ``input_independent``.
"""

from __future__ import annotations

import torch

from hawkeye_env.task_gates.failure import GateFailure
from hawkeye_env.task_gates.trials import DISTRIBUTIONS, Outputs, compare, dtype_name, is_near_constant, run_trial
from hawkeye_env.tasks.spec import TaskSpec

CODES = ("near_constant", "no_tolerance", "native_outside_tolerance", "zeros_pass", "constant_pass", "passthrough_pass",
         "lower_precision_pass", "input_independent")
LOWER = {torch.float32: torch.bfloat16, torch.bfloat16: torch.float8_e4m3fn, torch.float16: torch.float8_e4m3fn}


def degenerate_answers(out: Outputs, i: int) -> dict[str, torch.Tensor]:
    """Reason code -> a degenerate answer for output ``i`` that the tolerance must reject."""
    n, r = out.native[i], out.reference[i]
    answers = {"zeros_pass": torch.zeros_like(n), "constant_pass": torch.full_like(n, float(r.double().mean()))}
    for k, x in enumerate(out.inputs):
        if isinstance(x, torch.Tensor) and x.shape == n.shape:
            answers[f"passthrough_pass:{k}"] = x.to(n.dtype)
    if n.dtype in LOWER:
        answers["lower_precision_pass"] = n.to(LOWER[n.dtype]).to(n.dtype)
    return answers


def _check_output(spec: TaskSpec, out: Outputs, other: Outputs | None, i: int, where: str) -> None:
    n, r = out.native[i], out.reference[i]
    if is_near_constant(r):
        raise GateFailure("near_constant", f"{where}: output {i}")
    try:
        tol = spec.tolerance(dtype_name(n.dtype))
    except KeyError as exc:
        raise GateFailure("no_tolerance", f"{where}: output {i}: {exc.args[0]}") from exc
    floors = compare(n, r, n.dtype, tol)
    if not floors["ok"]:
        raise GateFailure("native_outside_tolerance", f"{where}: output {i}: {floors['reason']}"[:300])
    if other is None:
        return
    answers = degenerate_answers(out, i)
    if other.native[i].shape == n.shape:
        answers["input_independent"] = other.native[i]
    for code, answer in answers.items():
        if compare(answer, r, n.dtype, tol, native=n)["ok"]:
            raise GateFailure(code.split(":")[0], f"{where}: output {i} ({code})")


def informative(spec: TaskSpec, seed: int, outputs: dict[tuple, Outputs]) -> None:
    """Check every output of the trials ``reference`` built on the base distributions (module
    docstring): the reference's spread and the native output's error on every shape, the
    degenerate answers on the first."""
    first = next(iter(outputs))[0] if outputs else None
    for (shape_items, dist), out in outputs.items():
        if dist not in DISTRIBUTIONS:
            continue
        other = run_trial(spec, dict(shape_items), dist, seed + 1) if shape_items == first else None
        for i in range(len(out.native)):
            _check_output(spec, out, other, i, f"shape {dict(shape_items)}, {dist}")
