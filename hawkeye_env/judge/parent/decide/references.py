"""Float64 references computed by the trusted parent.

Workers ship outputs only; the parent rebuilds every trial's inputs and reference model from the
trial's seed, exactly as the worker does (``worker._Run``: ``Model(*get_init_inputs())`` under
``torch.manual_seed(seed)``, ``randomize_parameters``, ``make_inputs``), and computes the
reference with ``reference64``, so no reference is computed in a process that ran candidate code.
Timed iterations' inputs are rebuilt by replaying the timing harness's refills (``timing._refill``
on a generator seeded like ``time_callable``'s), so a kept output is checked against the inputs the
harness gave the candidate, before the call could touch them.

Next to each float64 reference the parent also runs the reference model in its own (native)
precision on the same inputs: ``correctness.compare`` calibrates its bounds by the error that
native output makes (``spec.Tolerance``), and its dtypes are the expected output dtypes (the
worker's report of them is not trusted). On the GPU that is one extra forward of the task's
PyTorch reference per trial and kept iteration, next to its float64 forward.

Inputs are drawn on the device the parent compares on (the lane's own GPU, the same model as the
worker's), so the draws match the worker's bit for bit. Building a reference model and a task's
integer inputs uses torch's global RNG, which is process-wide: builds hold ``_BUILD_LOCK`` so
concurrent verdicts of a pool cannot interleave their seeds.
"""

from __future__ import annotations

import copy
import threading
from dataclasses import dataclass

import torch

from hawkeye_env.judge.shared.inputs import fresh_seed, make_inputs, randomize_parameters
from hawkeye_env.judge.shared.inputs import refill as _refill
from hawkeye_env.judge.shared.wire import Job, Reply
from hawkeye_env.tasks.registry import task_module
from hawkeye_env.tasks.spec import TaskSpec

_BUILD_LOCK = threading.Lock()


def as_list(out) -> list:
    """A forward's outputs as a list (a lone tensor becomes one item)."""
    return list(out) if isinstance(out, (tuple, list)) else [out]


def reference64(ref, inputs: list, keep_float64: bool = False, host: bool = True) -> list:
    """``ref``'s outputs computed in float64 on float64 copies of the floating inputs, returned as
    float32 (as float64 when ``keep_float64``, for float64 tasks), on the host unless ``host`` is
    False (then on the inputs' device). A model with its own ``hawkeye_reference64(*inputs)``
    (imported KernelBench tasks: modules made in ``forward`` or held by closures follow float64,
    ``kernelbench/trials.py``) computes it."""
    args = [x.double() if isinstance(x, torch.Tensor) and x.is_floating_point() else x for x in inputs]
    if callable(getattr(ref, "hawkeye_reference64", None)):
        outs = [o.detach() for o in as_list(ref.hawkeye_reference64(*args))]
    else:
        outs = [o.detach() for o in as_list(copy.deepcopy(ref).double()(*args))]
    del args
    outs = [o if o.dtype == torch.float64 and keep_float64 else o.float() for o in outs]
    return [o.cpu() for o in outs] if host else outs



def build(spec: TaskSpec, shape: dict, distribution: str, seed: int, device: str,
          layout: dict | None = None) -> tuple[torch.nn.Module, list]:
    """The trial's reference model and inputs on ``device``, as the worker builds them."""
    task = task_module(spec)
    with _BUILD_LOCK:  # the global RNG: Model's default init, get_inputs' integer tensors
        init = task.get_init_inputs(**shape)
        torch.manual_seed(seed)
        ref = task.Model(*init)
        inputs = make_inputs(task, shape, distribution, seed, device, layout)
    randomize_parameters(ref, distribution, seed, device)  # its own generator
    return ref.to(device), inputs


def _reference(spec: TaskSpec, ref, inputs: list) -> list:
    with torch.no_grad():
        return reference64(ref, inputs, keep_float64=spec.dtypes == ("float64",), host=False)


def native_reference(ref, inputs: list) -> list:
    """``ref``'s outputs in its own precision on ``inputs`` (on their device)."""
    with torch.no_grad():
        outs = ref(*inputs)
    outs = list(outs) if isinstance(outs, (tuple, list)) else [outs]
    return [o.detach() for o in outs]


@dataclass
class TrialReferences:
    """The parent's references of one planned trial: float64 (``reference``) and native
    (``native``) outputs, and the same on the fresh inputs (``fresh_seed(seed)``) when
    the trial re-runs the candidate on new inputs (else None)."""

    reference: list
    native: list
    fresh_reference: list | None = None
    fresh_native: list | None = None


def trial_references(spec: TaskSpec, trial: dict, device: str) -> TrialReferences:
    """The float64 and native references of one planned trial (``TrialReferences``)."""
    shape, dist, seed = trial["shape"], trial["distribution"], trial["seed"]
    ref, inputs = build(spec, shape, dist, seed, device, trial.get("layout"))
    got = TrialReferences(_reference(spec, ref, inputs), native_reference(ref, inputs))
    if trial.get("rerun"):
        with _BUILD_LOCK:
            fresh_inputs = make_inputs(task_module(spec), shape, dist, fresh_seed(seed), device, trial.get("layout"))
        got.fresh_reference = _reference(spec, ref, fresh_inputs)
        got.fresh_native = native_reference(ref, fresh_inputs)
    return got


def kept_references(spec: TaskSpec, seed: int, refills: list[int], device: str) -> list[dict]:
    """References of the kept timed iterations, ``{"reference": float64, "native": native,
    "others": [(label, native)]}`` each: the timing inputs (first GPU shape, ``normal``, ``seed``)
    after each kept iteration's number of refills, replayed once in increasing order. ``others``
    holds the native answers for the inputs of other calls a stale output could come from: the
    warm-up's (no refill) and the previous iteration's (one refill fewer)."""
    ref, inputs = build(spec, dict(spec.gpu_shapes[0]), "normal", seed, device)
    generator = torch.Generator(device=next(x.device for x in inputs if isinstance(x, torch.Tensor)))
    generator.manual_seed(seed)
    results: list = [None] * len(refills)
    natives: dict[int, list] = {}
    wanted = sorted({0} | {max(r - 1, 0) for r in refills} | set(refills))
    done = 0
    for count in wanted:
        while done < count:
            _refill(inputs, generator)
            done += 1
        natives[count] = native_reference(ref, inputs)
        for i, r in enumerate(refills):
            if r == count:
                results[i] = {"reference": _reference(spec, ref, inputs), "native": natives[count]}
    for i, r in enumerate(refills):
        results[i]["others"] = [(label, natives[n]) for label, n in
                                (("the warm-up's inputs", 0), ("the previous iteration's inputs", r - 1))
                                if 0 <= n < r]
    return results


def fill_trial_references(spec: TaskSpec, job: Job, reply: Reply, device: str) -> None:
    """Put the parent's own float64 and native-precision references into the trial rows of a
    reply (workers ship outputs only): ``reference``
    and ``native``, and the same in ``fresh``."""
    for trial, row in zip(job["trials"], reply["trials"]):
        got = trial_references(spec, trial, device)
        row["reference"], row["native"] = got.reference, got.native
        if "fresh" in row:
            row["fresh"]["reference"], row["fresh"]["native"] = got.fresh_reference, got.fresh_native


def fill_kept_references(spec: TaskSpec, job: Job, reply: Reply, device: str) -> None:
    """The same for the kept timed iterations, from their replayed inputs."""
    kept = reply["timing"]["candidate"].get("kept") or []
    refs = kept_references(spec, job["timing"]["seed"], [int(k["refills"]) for k in kept], device)
    for k, r in zip(kept, refs):
        k["reference"], k["native"], k["others"] = r["reference"], r["native"], r["others"]


__all__ = ["TrialReferences", "build", "fill_kept_references", "fill_trial_references", "kept_references",
           "native_reference", "trial_references"]
