"""The parent's validation of a worker's reply against its own plan (docs/threat-model.md #20, #23).

A worker's reply is written by a process that ran candidate code, so it is data to check, never
to believe: a candidate that escaped its worker's Python defences can write the reply itself.
``reply_problem`` returns why a reply does not fit the job the parent sent (None when it fits):
one row per planned trial, the planned repeats and no others, outputs as tensors, the same number
of outputs in every call, timing exactly when the job asked for it and for the candidate only
(baseline times never come from a process that ran candidate code), finite positive times whose
sample counts match the plan, kept timed outputs at refill counts the plan allows, and violation
codes the judge knows. A misfit is a ``forged_reply`` violation: honest workers, running the
judge's own code, cannot produce one.

``progress_violations`` does the same for the violations a worker reports while it runs.
"""

from __future__ import annotations

import math

import torch

from hawkeye_env.judge.shared.timing_plan import TIMING_ROUNDS, plan_iterations
from hawkeye_env.judge.shared.verdict import MAX_VIOLATIONS, VIOLATION_CODES
from hawkeye_env.judge.shared.wire import Job, Trial

STAGES = ("ok", "compile_error", "runtime_error", "no_source")
# A verdict's error and each violation message keep at most this many characters of what a worker
# sent (about a screen of traceback; the worker's printed output is bounded the same way).
MAX_TEXT_CHARS = 8000
TIMING_FIELDS = ("median_ms", "iqr_ms", "cv", "wall_median_ms")
# A worker's profile names its own steps, about 10 (``worker.py``, ``worker_process.py``,
# ``replay.py``); every entry is copied into the verdict and its stored row, so a forged reply of
# 1.6 million entries took the parent 0.5 GB and the store 32 MB for one verdict.
MAX_PROFILE_ENTRIES = 64
MAX_PROFILE_KEY_CHARS = 64
# what a reply may say of its own runtime error (``Failure``): only that the CPU interpreter cannot run
# the kernels (the replay reports it; a worker that claims it only lowers its penalty to the
# not-checkable one, still below every correct kernel)
REPLY_FAILURES = ("", "not_checkable_on_cpu")


def _violations_problem(violations) -> str | None:
    if not isinstance(violations, list):
        return "violations is not a list"
    if len(violations) > MAX_VIOLATIONS:
        return f"{len(violations)} violations, more than a worker reports ({MAX_VIOLATIONS})"
    for item in violations:
        if not (isinstance(item, (list, tuple)) and len(item) == 2 and all(isinstance(x, str) for x in item)):
            return "a violation is not a (code, message) pair of strings"
        if item[0] not in VIOLATION_CODES:
            return f"unknown violation code {item[0][:40]!r}"
    return None


def progress_violations(violations) -> tuple[list[list[str]], str | None]:
    """The ``(code, message)`` pairs of a progress report, and the problem with it (None when it
    is well formed; then every code is a known one)."""
    problem = _violations_problem(violations)
    if problem is not None:
        return [], problem
    return [[c, m] for c, m in violations], None


def _outputs_problem(outputs, what: str, count: int | None) -> str | None:
    if not isinstance(outputs, list):
        return f"{what}: outputs is not a list"
    if count is not None and len(outputs) != count:
        return f"{what}: {len(outputs)} outputs where the first call returned {count}"
    for o in outputs:
        if o is None:
            continue
        if type(o) is not torch.Tensor:
            return f"{what}: an output is {type(o).__name__}, not a tensor"
        if o.layout is not torch.strided or o.device.type != "cpu" or o.is_quantized:
            return f"{what}: an output is a {o.layout} {o.device.type} tensor, not a dense host tensor"
    return None


def bounded_text(text, limit: int = MAX_TEXT_CHARS) -> str:
    """``text`` cut to its first and last ``limit // 2`` characters around a marker: a worker's
    error or message text reaches the verdict, the store and the agent's next prompt. Anything but
    a string becomes its type's name: printing a worker's value could walk far more than its size."""
    if not isinstance(text, str):
        return f"<{type(text).__name__}>"
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}\n[... {len(text) - 2 * half} characters omitted ...]\n{text[-half:]}"


def _trials_problem(plan: list[Trial], rows) -> str | None:
    if not isinstance(rows, list):
        return "trials is not a list"
    if len(rows) != len(plan):
        return f"{len(rows)} trial rows for {len(plan)} planned trials"
    for i, (trial, row) in enumerate(zip(plan, rows)):
        if not isinstance(row, dict):
            return f"trial {i} is not a dict"
        if "error" in row:  # only another protocol's trial may fail on its own, with text and no outputs
            if not trial.get("protocol") or not isinstance(row["error"], str) or row.get("outputs") != [] \
                    or set(row) != {"outputs", "error"}:
                return f"trial {i}: an error row where the plan allows none"
            continue
        first = _outputs_problem(row.get("outputs"), f"trial {i}", None)
        if first:
            return first
        count = len(row["outputs"])
        if bool(trial.get("rerun")) != ("rerun" in row) or bool(trial.get("rerun")) != ("fresh" in row):
            return f"trial {i}: repeats do not match the plan"
        if trial.get("rerun"):
            problem = _outputs_problem(row["rerun"], f"trial {i} rerun", count)
            if problem or not isinstance(row["fresh"], dict):
                return problem or f"trial {i}: fresh is not a dict"
            problem = _outputs_problem(row["fresh"].get("outputs"), f"trial {i} fresh", count)
            if problem:
                return problem
    return None


def _finite(x, positive: bool) -> bool:
    """A real number (not a bool) within 1e300, finite, and > 0 (``positive``) or >= 0 (a pickle
    carries integers past the float range, which ``float`` and ``math.isfinite`` raise on)."""
    if not isinstance(x, (int, float)) or isinstance(x, bool) or abs(x) > 1e300 or not math.isfinite(x):
        return False
    return x > 0 if positive else x >= 0


def _back_to_back_problem(plan: dict | None, times) -> str | None:
    """KernelBench's back-to-back times (``back_to_back.py``): exactly the planned count of finite
    positive milliseconds when the plan asks for them, absent otherwise."""
    if not plan:
        return None if times is None else "KernelBench times that the job did not ask for"
    if not isinstance(times, list) or len(times) != int(plan["trials"]) or not all(_finite(x, True) for x in times):
        return f"KernelBench times must be {int(plan['trials'])} finite positive numbers"
    return None


def _timing_problem(plan: dict | None, timing) -> str | None:
    if not plan:
        return None if not timing else "timing that the job did not ask for"
    if not isinstance(timing, dict) or set(timing) != {"candidate"}:
        keys = sorted(timing) if isinstance(timing, dict) else type(timing).__name__
        return f"timing must hold the candidate only (baselines are never timed next to it), got {keys}"
    cand = timing["candidate"]
    if not isinstance(cand, dict):
        return "candidate timing is not a dict"
    if not _finite(cand.get("median_ms"), True):
        return "candidate median time is not a finite positive number"
    for name in TIMING_FIELDS[1:]:
        if name in cand and not _finite(cand[name], False):
            return f"candidate {name} is not a finite number"
    attempts = cand.get("attempts")
    rounds = TIMING_ROUNDS + int(plan["retries"])  # time_callable: TIMING_ROUNDS, plus one per retry
    if not isinstance(attempts, int) or isinstance(attempts, bool) or not 1 <= attempts <= rounds:
        shown = attempts if isinstance(attempts, int) else f"<{type(attempts).__name__}>"
        return f"{shown} timing rounds where the plan allows 1 to {rounds}"
    events = cand.get("event_ms")
    if events is not None:
        if not isinstance(events, list) or not all(_finite(e, False) for e in events):
            return "event times are not a list of finite numbers"
        most = int(plan["iters"]) * attempts
        if not events or len(events) > most:
            return f"{len(events)} event times for {most} planned iterations"
    problem = _back_to_back_problem(plan.get("kernelbench"), cand.get("kernelbench_ms"))
    if problem:
        return problem
    kept = cand.get("kept", [])
    if not isinstance(kept, list):
        return "kept is not a list"
    most = attempts * int(plan["iters"])
    planned, _ = plan_iterations(int(plan["iters"]), int(plan["retries"]), int(plan["seed"]), int(plan.get("keep", 2)))
    counts = set()
    for k in kept:
        if not isinstance(k, dict):
            return "a kept iteration is not a dict"
        refills = k.get("refills")
        if not isinstance(refills, int) or isinstance(refills, bool) or not 1 <= refills <= most:
            shown = refills if isinstance(refills, int) and abs(refills) < 10**12 else type(refills).__name__
            return f"kept iteration at refill {shown}, outside 1..{most}"
        problem = _outputs_problem(k.get("outputs"), "kept iteration", None)
        if problem:
            return problem
        counts.add(len(k["outputs"]))
    if sorted(k["refills"] for k in kept) != [g + 1 for g in planned]:
        return "kept iterations are not the ones the plan picks"
    return None if len(counts) <= 1 else "kept iterations disagree on their number of outputs"


def _head_problem(reply) -> str | None:
    """The fields every reply has: a dict with a known stage, a text error, a numeric profile and
    well-formed violations."""
    if not isinstance(reply, dict):
        return f"the reply is {type(reply).__name__}, not a dict"
    stage = reply.get("stage")
    if stage not in STAGES:
        return f"unknown stage {stage[:40]!r}" if isinstance(stage, str) else \
            f"unknown stage (a {type(stage).__name__})"
    if not isinstance(reply.get("error", ""), str):
        return "error is not a string"
    if reply.get("failure", "") not in REPLY_FAILURES or (reply.get("failure") and stage != "runtime_error"):
        return "failure is not a known failure of a runtime error"
    profile = reply.get("profile", {})
    if not isinstance(profile, dict) or not all(_finite(x, False) for x in profile.values()
                                                if isinstance(x, (int, float))):
        return "the profile is not a dict of finite numbers"
    if len(profile) > MAX_PROFILE_ENTRIES or not all(
            isinstance(k, str) and len(k) <= MAX_PROFILE_KEY_CHARS for k in profile):
        return (f"the profile holds more than {MAX_PROFILE_ENTRIES} entries or a key that is not a name of at "
                f"most {MAX_PROFILE_KEY_CHARS} characters")
    return _violations_problem(reply.get("violations", []))


def reply_problem(job: Job, reply) -> str | None:
    """Why ``reply`` does not fit ``job`` (None when it does); see the module docstring."""
    problem = _head_problem(reply)
    if problem or reply["stage"] != "ok" or reply.get("violations"):
        return problem
    problem = _trials_problem(job["trials"], reply.get("trials"))
    if problem:
        return problem
    counts = {len(row["outputs"]) for row in reply["trials"] if "error" not in row}
    if len(counts) > 1:
        return "trials disagree on their number of outputs"
    return _timing_problem(job.get("timing"), reply.get("timing"))


def record_problem(job: Job, reply) -> str | None:
    """Why a recording worker's ``reply`` does not fit its ``job`` (``replayed.py``): the common
    fields, then no trial rows and no timing, and one entry per recording trial, each either
    ``{"refused": text}`` or ``{"plan": dict, "kernels": list}`` (the plans themselves are checked
    by ``plan_check.plan_problem``); the entries may stop at a refusal, which decides the verdict."""
    problem = _head_problem(reply)
    if problem or reply["stage"] != "ok" or reply.get("violations"):
        return problem
    if reply.get("trials") or reply.get("timing"):
        return "a recording reply with trial rows or timing"
    plans = reply.get("plans")
    stopped = isinstance(plans, list) and 0 < len(plans) < len(job["trials"]) and isinstance(plans[-1], dict) \
        and set(plans[-1]) == {"refused"}
    if not isinstance(plans, list) or (len(plans) != len(job["trials"]) and not stopped):
        return f"{len(plans) if isinstance(plans, list) else 'no'} plans for {len(job['trials'])} recording trials"
    for i, entry in enumerate(plans):
        if isinstance(entry, dict) and set(entry) == {"refused"} and isinstance(entry["refused"], str):
            entry["refused"] = bounded_text(entry["refused"], 2000)
            continue
        if not (isinstance(entry, dict) and set(entry) == {"plan", "kernels"}):
            return f"plan {i} is neither a plan with kernels nor a refusal"
    return None


__all__ = ["MAX_PROFILE_ENTRIES", "MAX_PROFILE_KEY_CHARS", "MAX_TEXT_CHARS", "bounded_text", "progress_violations",
           "record_problem", "reply_problem"]
