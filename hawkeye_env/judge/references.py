"""Float64 references computed by the trusted parent (``EvalConfig.reference_in_parent``).

By default the worker computes each trial's float64 reference next to the candidate's output and
ships both; at GPU shapes the references are most of the reply (608 MiB for ``gemm_bf16``, float32
copies of float64 results) and are computed in the process that also ran candidate code. With
``reference_in_parent`` the worker ships outputs only and the parent rebuilds every trial's
inputs and reference model from the trial's seed, exactly as the worker does (``worker._Run``:
``Model(*get_init_inputs())`` under ``torch.manual_seed(seed)``, ``randomize_parameters``,
``make_inputs``), and computes the reference with the worker's own ``reference64``. Timed
iterations' inputs are rebuilt by replaying the timing harness's refills (``timing._refill`` on a
generator seeded like ``time_callable``'s), so a kept output is checked against the inputs the
harness gave the candidate, before the call could touch them.

Inputs are drawn on the device the parent compares on (the lane's own GPU, the same model as the
worker's), so the draws match the worker's bit for bit. Building a reference model and a task's
integer inputs uses torch's global RNG, which is process-wide: builds hold ``_BUILD_LOCK`` so
concurrent verdicts of a pool cannot interleave their seeds.
"""

from __future__ import annotations

import threading

import torch

from hawkeye_env.judge.inputs import make_inputs, randomize_parameters
from hawkeye_env.judge.timing import _refill
from hawkeye_env.judge.worker import reference64
from hawkeye_env.tasks.registry import task_module
from hawkeye_env.tasks.spec import TaskSpec

_BUILD_LOCK = threading.Lock()


def build(spec: TaskSpec, shape: dict, distribution: str, seed: int, device: str) -> tuple[torch.nn.Module, list]:
    """The trial's reference model and inputs on ``device``, as the worker builds them."""
    task = task_module(spec)
    with _BUILD_LOCK:  # the global RNG: Model's default init, get_inputs' integer tensors
        init = task.get_init_inputs(**shape)
        torch.manual_seed(seed)
        ref = task.Model(*init)
        inputs = make_inputs(task, shape, distribution, seed, device)
    randomize_parameters(ref, distribution, seed, device)  # its own generator
    return ref.to(device), inputs


def _reference(spec: TaskSpec, ref, inputs: list) -> list:
    with torch.no_grad():
        return reference64(ref, inputs, keep_float64=spec.dtypes == ("float64",), host=False)


def trial_references(spec: TaskSpec, trial: dict, device: str) -> tuple[list, list | None]:
    """``(references, fresh_references)`` of one planned trial; the second is None unless the
    trial re-runs the candidate on new inputs (``seed + 1``)."""
    shape, dist, seed = trial["shape"], trial["distribution"], trial["seed"]
    ref, inputs = build(spec, shape, dist, seed, device)
    refs = _reference(spec, ref, inputs)
    fresh = None
    if trial.get("rerun"):
        with _BUILD_LOCK:
            fresh_inputs = make_inputs(task_module(spec), shape, dist, seed + 1, device)
        fresh = _reference(spec, ref, fresh_inputs)
    return refs, fresh


def kept_references(spec: TaskSpec, seed: int, refills: list[int], device: str) -> list[list]:
    """References of the kept timed iterations: the timing inputs (first GPU shape, ``normal``,
    ``seed``) after each kept iteration's number of refills, replayed once in increasing order."""
    ref, inputs = build(spec, dict(spec.gpu_shapes[0]), "normal", seed, device)
    generator = torch.Generator(device=next(x.device for x in inputs if isinstance(x, torch.Tensor)))
    generator.manual_seed(seed)
    results: list = [None] * len(refills)
    done = 0
    for i in sorted(range(len(refills)), key=refills.__getitem__):
        while done < refills[i]:
            _refill(inputs, generator)
            done += 1
        results[i] = _reference(spec, ref, inputs)
    return results


__all__ = ["build", "kept_references", "trial_references"]
