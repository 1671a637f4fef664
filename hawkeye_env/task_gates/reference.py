"""Gate: the reference is deterministic and finite on every input distribution.

For every gate shape (``trials.gate_shapes``: the public CPU shapes and one hidden shape) and every
distribution a verdict draws from (the task's ``distributions`` and value distributions), every
element of the native and float64 outputs must be finite; on the first shape each trial is built
twice from the same seed, and both builds must give bit-identical outputs. A reference that is not
finite cannot score a candidate (the judge skips such trials), and one that is not deterministic
would fail honest kernels.

Reason codes: ``reference_error`` (the forward raised), ``nondeterministic``, ``nonfinite``.
"""

from __future__ import annotations

import torch

from hawkeye_env.task_gates.failure import GateFailure
from hawkeye_env.task_gates.trials import Outputs, gate_shapes, run_trial, trial_distributions
from hawkeye_env.tasks.spec import TaskSpec

CODES = ("reference_error", "nondeterministic", "nonfinite")


def _run(spec: TaskSpec, shape: dict, distribution: str, seed: int) -> Outputs:
    try:
        return run_trial(spec, shape, distribution, seed)
    except Exception as exc:  # noqa: BLE001 - any failure of the task's own code drops it
        raise GateFailure("reference_error", f"{shape} {distribution}: {type(exc).__name__}: {exc}"[:300]) from exc


def reference(spec: TaskSpec, seed: int) -> dict[tuple, Outputs]:
    """Check the reference (module docstring); returns each trial's outputs by ``(shape items,
    distribution)`` for the gates after it. Determinism is checked on the first shape, for every
    distribution (a second build of each); finiteness on every shape."""
    outputs = {}
    for k, shape in enumerate(gate_shapes(spec, seed)):
        for dist in trial_distributions(spec):
            first = _run(spec, shape, dist, seed)
            again = _run(spec, shape, dist, seed) if k == 0 else first
            where = f"shape {shape}, {dist}"
            for name, a, b in (("native", first.native, again.native), ("float64", first.reference, again.reference)):
                for i, (x, y) in enumerate(zip(a, b)):
                    if not bool(torch.isfinite(x).all()):
                        bad = int((~torch.isfinite(x)).sum())
                        raise GateFailure("nonfinite", f"{where}: {name} output {i} has {bad} of {x.numel()} NaN/Inf")
                    if not torch.equal(x, y):
                        raise GateFailure("nondeterministic", f"{where}: {name} output {i} differs between two runs")
            outputs[(tuple(sorted(shape.items())), dist)] = first
    return outputs
