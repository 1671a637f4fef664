"""A GPU verdict in two processes: the candidate's worker records, a trusted replay measures.

The trusted parent's side of the replay design (``replay.py``):

1. the candidate's worker gets one recording trial per shape the verdict checks, with seeds drawn
   here and used nowhere else, and replies with a launch plan per shape (``plan_recorder.py``)
   plus what its guards saw;
2. the parent checks that reply (``reply_check.record_problem``) and every plan
   (``plan_check.plan_problem``: the task's allowlist, bounds, kernels' signatures and binaries);
3. a fresh trusted replay process runs the verdict's own trials and timing from the plans and
   replies in the worker's reply format, which the evaluator then reads as before.

A forward that cannot be replayed (``NotReplayable``: it read device data on the host, passed a
raw pointer, ...) gets a ``runtime_error`` verdict that says why: on the GPU only replayed outputs
and times count. ``$HAWKEYE_REPLAY=off`` turns the replay off (the worker's own outputs and times
are then judged, as on CPU); every verdict's ``versions["replay"]`` says which was used.
"""

from __future__ import annotations

import os
import secrets
import time

from hawkeye_env.judge.parent.launch import run_job, standby, start
from hawkeye_env.judge.parent.validate import plan_check, reply_check, source_check
from hawkeye_env.judge.shared import launch_plan
from hawkeye_env.judge.shared.verdict import Failure, Stage, Verdict, Violation
from hawkeye_env.judge.shared.wire import Job, Reply, Trial

ENV_FLAG = "HAWKEYE_REPLAY"


def mode(device: str) -> str:
    """``"replay"`` where verdicts are replayed (the default, CPU and CUDA), ``"worker"`` where
    outputs and times come from the candidate's own worker (``$HAWKEYE_REPLAY=off``)."""
    off = os.environ.get(ENV_FLAG, "").strip().lower() in ("0", "off", "false", "no")
    return "worker" if off else "replay"


def recording_trials(trials: list[Trial]) -> list[Trial]:
    """One recording call per distinct (shape, layout) of ``trials``, in order, on fresh seeds (a
    plan's views of its inputs' storage depend on their layout, ``layouts.py``); then, per repeat
    trial's (shape, layout), a ``warm`` recording: the second forward of one model instance, whose
    first forward is not recorded. The repeat trial replays that plan, so device memory the
    candidate makes in its first forward and keeps (a lazily made buffer) is a constant there,
    carried and poisoned like one made in ``__init__``; every other trial replays a first forward."""
    keys: list[tuple[dict, dict | None, bool]] = []
    for warm in (False, True):
        for t in trials:
            if (not warm or t.get("rerun")) and (t["shape"], t.get("layout"), warm) not in keys:
                keys.append((t["shape"], t.get("layout"), warm))
    return [{"shape": s, "distribution": "normal", "seed": secrets.randbelow(2**31), "order": "candidate_first",
             "layout": layout, **({"warm": True} if warm else {})} for s, layout, warm in keys]


def worker_failure(outcome, v: Verdict) -> bool:
    """Fill ``v`` from a worker that gave no reply (timeout, crash, memory); True when it did."""
    if outcome.reply is not None:
        return False
    if outcome.failure == "forged":  # a message only a candidate that took over its worker sends
        v.stage, v.violations = Stage.REJECTED, [Violation("forged_reply", reply_check.bounded_text(outcome.detail))]
        return True
    v.stage, v.failure = Stage.RUNTIME_ERROR, Failure.of(outcome.failure)
    v.error = reply_check.bounded_text(f"{outcome.failure}: {outcome.detail}")
    reported, problem = reply_check.progress_violations(outcome.violations)
    v.violations = [Violation(code, reply_check.bounded_text(msg)) for code, msg in reported]
    if problem:
        v.violations.append(Violation("forged_reply", f"progress report: {problem}"))
    if v.violations:
        v.stage = Stage.REJECTED
    return True


def decided_by_reply(reply: Reply, v: Verdict) -> bool:
    """Fill ``v`` from a checked reply's violations and stage; True when they decide it (a
    violation, or a stage other than ``ok``: compile error, runtime error, no source)."""
    v.violations = [Violation(code, reply_check.bounded_text(msg)) for code, msg in reply.get("violations", [])]
    if reply["stage"] != "ok":
        v.stage, v.error = Stage(reply["stage"]), reply_check.bounded_text(reply.get("error", ""))
        v.failure = Failure(reply.get("failure", ""))
        v.compiled = v.stage not in (Stage.COMPILE_ERROR, Stage.NO_SOURCE)
    if v.violations:
        v.stage = Stage.REJECTED
    return bool(v.violations) or reply["stage"] != "ok"


def worker_profile(outcome) -> dict[str, float]:
    """The parent's own timing of a candidate's worker for ``Verdict.profile``: its wall time, the
    wait to hold it, its standby's start-up, its lane waits and its reply's transfer."""
    return {"worker_wall_s": outcome.wall_s, "worker_start_s": outcome.start_s,
            "worker_standby_ready_s": outcome.standby_ready_s, "lane_wait_s": outcome.lane_wait_s,
            **outcome.transfer}


def _profile(v: Verdict, prefix: str, outcome) -> None:
    v.profile[f"{prefix}wall_s"] = outcome.wall_s
    v.profile[f"{prefix}lane_wait_s"] = outcome.lane_wait_s
    reported = outcome.reply.get("profile") if isinstance(outcome.reply, dict) else None
    if isinstance(reported, dict):
        v.profile.update({f"{prefix}{k}": float(x) for k, x in reported.items()
                          if isinstance(x, (int, float)) and not isinstance(x, bool)})


def checked(check, *args) -> str | None:
    """``check(*args)``, a validation of the candidate's reply: an exception it raises is the
    reply's problem (the data is the candidate's, so is the failure: a ``judge_error`` would pay
    a forged reply as a runtime error and judge it again)."""
    try:
        return check(*args)
    except Exception as exc:  # noqa: BLE001 - see the docstring
        return f"the reply breaks its validation ({type(exc).__name__})"


def recorded_entries(job: Job, allowed_ops: frozenset[str], timeout_s: float, memory_limit_bytes: int,
                     lane, v: Verdict) -> list[dict] | None:
    """Steps 1-2 of the module docstring for ``job``: the checked ``{"shape", "layout", "plan",
    "kernels", "warm"}`` entries, one per recording trial (``recording_trials``); None when ``v`` is already decided
    (the worker failed or was rejected, the plans were refused or malformed)."""
    record = {**job, "trials": recording_trials(job["trials"]), "timing": None, "record": True,
              "reply_limit_bytes": run_job.SMALL_REPLY_BYTES}
    if standby.enabled(job["device"]):  # the replay's process warms up while the worker records
        standby.POOL.prime(start.REPLAY_TARGET, job["device"], lane, memory_limit_bytes)
    outcome = run_job.run_in_worker(record, timeout_s, memory_limit_bytes, lane)
    v.profile.update(worker_profile(outcome))
    if worker_failure(outcome, v):
        return None
    reply = outcome.reply
    problem = checked(reply_check.record_problem, record, reply)
    if problem:
        v.stage, v.violations = Stage.REJECTED, [Violation("forged_reply", problem)]
        return None
    _profile(v, "worker.", outcome)
    if decided_by_reply(reply, v):
        return None
    entries, checking = [], time.monotonic()
    for trial, entry in zip(record["trials"], reply["plans"]):
        if "refused" in entry:
            v.stage = Stage.RUNTIME_ERROR
            call = " (a model's second forward)" if trial.get("warm") else ""
            v.error = reply_check.bounded_text(f"not replayable at shape {trial['shape']}{call}: {entry['refused']}")
            return None
        problem = checked(plan_check.plan_problem, entry["plan"], entry["kernels"], allowed_ops, job["device"])
        if problem:
            v.stage, v.violations = Stage.REJECTED, [Violation("invalid_plan", f"shape {trial['shape']}: {problem}")]
            return None
        problem = source_check.rules_problem(entry["kernels"]) if job["device"] == "cpu" else None
        if problem:
            v.stage, v.compiled = Stage.COMPILE_ERROR, False
            v.error = reply_check.bounded_text(f"{problem}: a kernel's body computes on its arguments and writes "
                                               "tensors (what Triton compiles for a GPU)")
            return None
        entries.append({"shape": trial["shape"], "layout": trial.get("layout"), "plan": entry["plan"],
                        "kernels": entry["kernels"], "warm": bool(trial.get("warm"))})
    v.profile["plan_check_s"] = time.monotonic() - checking
    return entries


def record_and_replay(job: Job, allowed_ops: frozenset[str], timeout_s: float, memory_limit_bytes: int,
                      lane, v: Verdict, instructions: bool = False) -> dict | None:
    """Steps 1-3 of the module docstring for ``job`` (the evaluator's job). Returns the replay's
    reply, checked against ``job`` (the evaluator reads it as a worker's); None when ``v`` is
    already decided (the worker failed or was rejected, the plans were refused or malformed, the
    replay failed). ``instructions`` asks the replay for the kernels' machine-code facts too
    (``ReplayJob.instructions``)."""
    entries = recorded_entries(job, allowed_ops, timeout_s, memory_limit_bytes, lane, v)
    if entries is None:
        return None
    replay_job = {"kind": "replay", "task": job["task"], "device": job["device"], "trials": job["trials"],
                  "timing": job["timing"], "plans": launch_plan.to_job(entries),
                  "task_dirs": job.get("task_dirs") or []}
    if instructions:
        replay_job["instructions"] = True
    outcome = run_job.run_in_worker(replay_job, timeout_s, memory_limit_bytes, lane, serve=start.REPLAY_TARGET)
    v.profile.update({"replay_wall_s": outcome.wall_s, "replay_start_s": outcome.start_s,
                      "replay_standby_ready_s": outcome.standby_ready_s,
                      **{f"replay_{k}": x for k, x in outcome.transfer.items()}})
    if outcome.reply is None:
        v.stage, v.failure = Stage.RUNTIME_ERROR, Failure.of(outcome.failure)
        v.error = reply_check.bounded_text(f"the replay of the candidate's kernels failed: {outcome.failure}: "
                                           f"{outcome.detail}")
        return None
    _profile(v, "replay.", outcome)
    problem = reply_check.reply_problem(job, outcome.reply)
    if problem:  # the replay runs the judge's code, but the candidate's kernels ran in it
        v.stage, v.violations = Stage.REJECTED, [Violation("forged_reply", f"replay: {problem}")]
        return None
    return outcome.reply


__all__ = ["ENV_FLAG", "checked", "decided_by_reply", "worker_profile",
           "mode", "record_and_replay", "recorded_entries", "recording_trials", "worker_failure"]
