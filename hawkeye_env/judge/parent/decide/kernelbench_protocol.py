"""KernelBench's own protocol, judged beside hawkeye's: ``EvalConfig(protocol="kernelbench")``.

KernelBench (``src/eval.py``: ``eval_kernel_against_ref`` and ``run_and_check_correctness``, with
the trial counts ``scripts/eval_from_generations.py`` passes) decides a ``ModelNew`` by

- ``TRIALS`` correctness trials, each on the problem file's own ``get_inputs()`` drawn under a
  trial seed, the model at its default initialisation (``Model(*get_init_inputs())`` under a
  seed); the sample is correct only when every trial passes;
- ``torch.allclose(output, output_new, atol, rtol)`` against the reference run in its own
  precision (not float64); a shape mismatch or a raise fails the sample;
- its runtime: the mean (not the median) of ``TIMED_TRIALS`` CUDA-event times of a correct sample.

How the judge runs it: ``plan`` gives ``TRIALS`` extra trials marked ``"protocol": "kernelbench"``
with the ``inputs.NATIVE`` distribution, appended to the verdict's own plan (``plan.plan_trials``).
The worker, and on CUDA the trusted replay, run them as any trial (``make_inputs`` and
``randomize_parameters`` give the file's own values and the default initialisation under each
trial's seed), under the same guards: a violation there decides the verdict as in any trial,
while a raise fails only that trial of KernelBench's protocol (its row carries the error in place
of outputs, which ``reply_check`` allows on the protocol's trials alone), as KernelBench counts a
sample that raises incorrect. The trusted parent computes each trial's native-precision reference itself
(``references.build``, ``native_reference``) and applies ``torch.allclose`` (``judge``). The result
goes to ``verdict.protocols["kernelbench"]`` (``report``) and never into the reward. On CUDA
``mean_ms`` is KernelBench's own figure: after the judge's timing, the replay (or, worker-timed,
the worker) calls the candidate ``TIMED_TRIALS`` times back to back on the first protocol trial's
inputs, CUDA events around each call (``back_to_back.py``), and the parent takes their mean;
``baseline_mean_ms`` is the reference timed the same way by a baseline-only worker
(``baselines.KERNELBENCH_EAGER``), so ``baseline_mean_ms / mean_ms`` is KernelBench's speedup. On
CPU nothing is timed and both are None.

    >>> out = torch.ones(4) * (1 + 5e-3)
    >>> allclose_failure([out], [torch.ones(4)], atol=1e-2, rtol=1e-2)[0]
    ''
    >>> allclose_failure([out], [torch.ones(4)], atol=1e-4, rtol=1e-4)[0][:15]
    'Output mismatch'
"""

from __future__ import annotations

import math
import statistics

import torch

from hawkeye_env.judge.parent.decide import references
from hawkeye_env.judge.shared.inputs import NATIVE, derived_seed
from hawkeye_env.judge.shared.verdict import Verdict
from hawkeye_env.judge.shared.wire import Job, Reply, Trial
from hawkeye_env.tasks.spec import TaskSpec

PROTOCOL = "kernelbench"
TRIALS = 5  # scripts/eval_from_generations.py: num_correct_trials=5
TIMED_TRIALS = 100  # scripts/eval_from_generations.py: num_perf_trials=100
# src/eval.py, run_and_check_correctness: "kernelbench v0 and v0.1 uses fp32, atol = rtol = 1e-02";
# its later fp32 tolerance, get_tolerance_for_precision (from torchbench), is STRICT_TOLERANCE.
ATOL = RTOL = 1e-2
STRICT_TOLERANCE = 1e-4


def plan(spec: TaskSpec, device: str, seed: int) -> list[Trial]:
    """The protocol's ``TRIALS`` trials: at the first CPU shape on CPU, the first GPU shape (the
    file's own sizes for an imported task) elsewhere; reference first, as KernelBench runs them."""
    shape = dict(spec.cpu_shapes[0] if device == "cpu" else spec.gpu_shapes[0])
    return [{"shape": dict(shape), "distribution": NATIVE, "seed": derived_seed(seed, f"kernelbench{i}"),
             "order": "reference_first", "protocol": PROTOCOL} for i in range(TRIALS)]


def report(correct: bool, failed: int, reason: str, mean_ms: float | None, atol: float, rtol: float,
           max_abs_diff: float | None = None) -> dict:
    """The ``verdict.protocols["kernelbench"]`` entry: bools, finite numbers, None and text, so
    it is strict JSON (a NaN or Inf difference is None; ``reason`` names it)."""
    finite = max_abs_diff is not None and math.isfinite(max_abs_diff)
    return {"correct": bool(correct), "trials": TRIALS, "failed": int(failed), "reason": reason,
            "mean_ms": mean_ms, "atol": float(atol), "rtol": float(rtol),
            "max_abs_diff": float(max_abs_diff) if finite else None, "baseline_mean_ms": None}


def set_baseline(v: Verdict, entry: dict | None) -> None:
    """Put the reference's time by KernelBench's method (``baselines.KERNELBENCH_EAGER``'s stored
    entry, measured by a baseline-only worker) in ``v``'s protocol entry as ``baseline_mean_ms``,
    where both exist: the protocol's ``mean_ms`` over it is KernelBench's speedup, each side timed
    the same way."""
    if PROTOCOL in v.protocols and entry and "unavailable" not in entry:
        v.protocols[PROTOCOL]["baseline_mean_ms"] = float(entry["median_ms"])


def _worst(diffs: list[float]) -> float | None:
    """The largest of ``diffs`` (NaN when one is NaN), None when empty."""
    if not diffs:
        return None
    return math.nan if any(math.isnan(d) for d in diffs) else max(diffs)


def allclose_failure(outs: list, refs: list, atol: float, rtol: float) -> tuple[str, float | None]:
    """Why ``outs`` fail KernelBench's check against the native references ``refs`` ("" when they
    pass), and their largest absolute difference (None when not comparable). A dtype other than
    the reference's fails, as ``torch.allclose`` refuses mixed dtypes; NaN never equals NaN."""
    if len(outs) != len(refs):
        return f"{len(outs)} outputs, expected {len(refs)}", None
    diffs: list[float] = []
    for i, (o, r) in enumerate(zip(outs, refs)):
        if type(o) is not torch.Tensor:
            return f"output {i} is not a tensor", None
        if o.shape != r.shape:
            return f"Output shape mismatch: expected {tuple(r.shape)}, got {tuple(o.shape)}", None
        if o.dtype != r.dtype:
            return f"output {i} is {o.dtype} where the reference is {r.dtype}", None
        o = o.to(r.device)
        diffs.append(float((o.double() - r.double()).abs().max()) if o.numel() else 0.0)
        if not torch.allclose(o, r, atol=atol, rtol=rtol):
            return f"Output mismatch: output {i}, max abs difference {diffs[-1]:.3g}", _worst(diffs)
    return "", _worst(diffs)


def mean_ms(timing: dict | None) -> float | None:
    """The mean of a reply's KernelBench times (``back_to_back.time_back_to_back``: ``TIMED_TRIALS``
    back-to-back calls on the first protocol trial's inputs), or None when it has none (CPU)."""
    times = ((timing or {}).get("candidate") or {}).get("kernelbench_ms") or []
    return statistics.fmean(times) if times else None


def judge(spec: TaskSpec, trials: list[dict], rows: list[dict], timing: dict | None, device: str,
          atol: float, rtol: float) -> dict:
    """KernelBench's verdict on the protocol's ``trials`` from the reply's ``rows`` (their
    ``outputs``, host tensors), each compared on ``device`` with the parent's own native-precision
    reference; ``report``'s entry. ``mean_ms`` (``timing``: the reply's) only when correct."""
    failures: list[str] = []
    diffs: list[float] = []
    for i, (t, row) in enumerate(zip(trials, rows)):
        if "error" in row:  # the candidate raised in this trial: KernelBench counts it incorrect
            lines = [x for x in row["error"].strip().splitlines() if x.strip()]
            failures.append(f"trial {i}: raised {lines[-1][:200] if lines else 'an error'}")
            continue
        ref, inputs = references.build(spec, t["shape"], t["distribution"], t["seed"], device)
        why, diff = allclose_failure(row["outputs"], references.native_reference(ref, inputs), atol, rtol)
        del ref, inputs
        if diff is not None:
            diffs.append(diff)
        if why:
            failures.append(f"trial {i}: {why}")
    correct = not failures
    reason = "" if correct else f"{len(failures)} of {len(trials)} trials failed; first: {failures[0]}"
    return report(correct, len(failures), reason, mean_ms(timing) if correct else None, atol, rtol, _worst(diffs))


def judge_and_strip(spec: TaskSpec, job: Job, reply: Reply, device: str, v: Verdict, atol: float,
                    rtol: float) -> tuple[dict, dict]:
    """Judge the protocol's trials of ``reply`` into ``v.protocols`` (``judge``) and return ``job``
    and ``reply`` with the verdict's own trials only (shallow copies), which the parent then
    checks as it checks any verdict's."""
    pairs = list(zip(job["trials"], reply["trials"]))
    theirs = [(t, r) for t, r in pairs if t.get("protocol") == PROTOCOL]
    own = [(t, r) for t, r in pairs if t.get("protocol") != PROTOCOL]
    if theirs:
        v.protocols[PROTOCOL] = judge(spec, [t for t, _ in theirs], [r for _, r in theirs], reply.get("timing"),
                                      device, atol, rtol)
    return {**job, "trials": [t for t, _ in own]}, {**reply, "trials": [r for _, r in own]}


def fill_unjudged(v: Verdict, atol: float, rtol: float) -> None:
    """Give ``v`` the protocol's entry when its trials were never compared (a static rejection, a
    compile or runtime error, a violation, a failed worker): incorrect, as KernelBench counts a
    sample that does not compile or run, every trial failed."""
    if PROTOCOL in v.protocols:
        return
    why = v.error.strip().splitlines()[0][:200] if v.error.strip() else ", ".join(x.code for x in v.violations)
    v.protocols[PROTOCOL] = report(False, TRIALS, f"not compared: the verdict is {v.stage.value}"
                                   + (f" ({why})" if why else ""), None, atol, rtol)


__all__ = ["ATOL", "PROTOCOL", "RTOL", "STRICT_TOLERANCE", "TIMED_TRIALS", "TRIALS", "allclose_failure",
           "fill_unjudged", "judge", "judge_and_strip", "mean_ms", "plan", "report", "set_baseline"]
