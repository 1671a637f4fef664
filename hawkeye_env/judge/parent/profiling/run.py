"""Profiling a source's kernels on request, through the judge's own processes.

``profile_source`` takes the path a verdict takes, up to the replay: the static gate
(``Evaluator.check_static``), one recording of the forward at the profile's shape in a sandboxed
candidate worker, the parent's checks of its plan (``record_replay.recorded_entries``: the plan,
and on CPU each kernel's source under the kernel rules), then a ``"profile"`` job for the trusted
replay (``sandboxed/replay/profile_job.py``), which reads the kernels' machine code (on CPU a
cross-compile for sm_90 of the checked source; on a GPU the plan's cubins) and on a GPU runs Nsight
Compute on one replayed forward. The replay's answer is checked (``validate/facts_check.py``)
before anything reads it. No candidate code runs outside its worker, and the replay never imports
it.

``profile_report`` profiles a source and the task's expert solution the same way and renders both
with the task's speed of light (``report.render``), each unit's metric for both
(``unit_metrics.py``) and, for a task with ``mma_operands``, both sources' instruction evidence by
the verdict's rule (``decide/instructions.py``) read from the profiles' kernels. Profiles are
cached in this process by task, source hash, device, shape and judge versions, so the expert's is
computed once per process and a repeated source is answered at once.

The profile's shape: on a GPU the task's timed shape. On CPU the recording allocates the inputs on
the host, so the timed shape is used when its ``bytes_moved`` is at most ``CPU_RECORDING_BYTES``,
and the largest CPU shape otherwise (the report names the shape either way: tile sizes a host
function derives from the shape follow it).
"""

from __future__ import annotations

import collections
import json
import secrets
import threading
import time

from hawkeye_env.judge.parent import record_replay
from hawkeye_env.judge.parent.decide.instructions import evidence
from hawkeye_env.judge.parent.decide.speed_of_light import JUDGED_GPUS, fraction, speed_of_light
from hawkeye_env.judge.parent.lanes import default_lane
from hawkeye_env.judge.parent.launch import run_job, start
from hawkeye_env.judge.parent.profiling.report import KernelProfile, render
from hawkeye_env.judge.parent.profiling.unit_metrics import unit_lines, unit_metrics
from hawkeye_env.judge.parent.store import source_hash
from hawkeye_env.judge.parent.validate import reply_check
from hawkeye_env.judge.parent.validate.facts_check import checked_counters, checked_facts
from hawkeye_env.judge.parent.versions import resolve_device, software_versions
from hawkeye_env.judge.shared import launch_plan
from hawkeye_env.judge.shared.verdict import Stage, Verdict
from hawkeye_env.tasks.registry import get_task, solution_source, user_task_dirs
from hawkeye_env.tasks.spec import TaskSpec

# On CPU the forward is recorded at the timed GPU shape when the task moves at most this many
# bytes there (its inputs and outputs, allocated on the host): 1 GiB keeps the recording worker
# far inside its 8 GiB cap with the guards' copies of the inputs.
CPU_RECORDING_BYTES = 1 << 30
CACHE_ENTRIES = 64
_CACHE: collections.OrderedDict[tuple, KernelProfile] = collections.OrderedDict()
_CACHE_LOCK = threading.Lock()


def profile_shape(spec: TaskSpec, device: str) -> dict:
    """The shape a profile records at (module docstring)."""
    timed = dict(spec.gpu_shapes[0])
    if device == "cuda" or spec.bytes_moved(**timed) <= CPU_RECORDING_BYTES or not spec.cpu_shapes:
        return timed
    return dict(max(spec.cpu_shapes, key=lambda s: spec.bytes_moved(**s)))


def _stopped(p: KernelProfile, v: Verdict) -> KernelProfile:
    p.stage = v.stage.value
    why = [f"{x.code}: {x.message}" for x in v.violations] + ([v.error] if v.error else [])
    p.error = reply_check.bounded_text("; ".join(why) or "stopped", 2000)
    return p


def _replay_profile(evaluator, spec: TaskSpec, device: str, shape: dict, entries: list[dict], lane, counters: bool,
                    p: KernelProfile) -> KernelProfile:
    job = {"kind": "profile", "task": spec.id, "device": device, "trials": [], "timing": None,
           "plans": launch_plan.to_job(entries[:1]), "task_dirs": user_task_dirs(), "shape": shape,
           "seed": secrets.randbelow(2**31), "counters": counters and device == "cuda"}
    memory = evaluator.config.memory_limit_bytes(device)
    outcome = run_job.run_in_worker(job, evaluator.config.timeout_s, memory, lane, serve=start.REPLAY_TARGET)
    p.seconds["replay"] = outcome.wall_s
    if outcome.reply is None:
        p.stage = Stage.RUNTIME_ERROR.value
        p.error = reply_check.bounded_text(f"the profile's replay failed: {outcome.failure}: {outcome.detail}", 2000)
        return p
    reply = outcome.reply
    problem = reply_check.reply_problem(job, reply)
    if reply.get("stage") != "ok" or problem:
        p.stage = Stage.REJECTED.value if problem else str(reply.get("stage"))
        p.error = reply_check.bounded_text(problem or reply.get("error", ""), 2000)
        return p
    try:
        p.kernels, p.counters = checked_facts(reply.get("kernels")), checked_counters(reply.get("counters"))
    except ValueError as exc:
        p.stage, p.error = Stage.REJECTED.value, f"the profile's replay sent malformed facts: {exc}"
        return p
    p.seconds.update({k: float(reply["profile"][k]) for k in ("sass_s", "counters_s")
                      if isinstance(reply.get("profile", {}).get(k), (int, float))})
    return p


def profile_source(evaluator, task_id: str, source: str, device: str = "auto", lane=None, counters: bool = True,
                   use_cache: bool = True) -> KernelProfile:
    """The ``KernelProfile`` of ``source`` on ``task_id`` (module docstring), judged by
    ``evaluator``'s config (timeout, memory cap, static checks). ``counters`` runs Nsight Compute
    on a GPU. Never raises for anything the source does."""
    started = time.monotonic()
    spec, device = get_task(task_id), resolve_device(device)
    shape = profile_shape(spec, device)
    digest, versions = source_hash(source), software_versions(device, spec)
    key = (task_id, digest, device, json.dumps(shape, sort_keys=True), json.dumps(versions, sort_keys=True), counters)
    with _CACHE_LOCK:
        if use_cache and key in _CACHE:
            _CACHE.move_to_end(key)
            hit = KernelProfile(**_CACHE[key].to_dict())
            hit.cached = True
            return hit
    p = KernelProfile(task_id, device, shape)
    v = Verdict(task=task_id, device=device, stage=Stage.CORRECT, source_hash=digest, versions=versions)
    lane = lane if lane is not None else default_lane(device)
    if not evaluator.check_static(source, v):
        return _stopped(p, v)
    job = {"task": task_id, "source": source, "device": device, "module_name": f"hawkeye_candidate_{digest[:12]}",
           "trials": [{"shape": shape, "distribution": "normal", "seed": secrets.randbelow(2**31),
                       "order": "candidate_first", "layout": None}], "timing": None, "task_dirs": user_task_dirs()}
    entries = record_replay.recorded_entries(job, spec.allowed_ops, evaluator.config.timeout_s,
                                             evaluator.config.memory_limit_bytes(device), lane, v)
    p.seconds["record"] = time.monotonic() - started
    if entries is None:
        return _stopped(p, v)
    p = _replay_profile(evaluator, spec, device, shape, entries, lane, counters, p)
    p.seconds["wall"] = time.monotonic() - started
    if p.ok:
        with _CACHE_LOCK:
            _CACHE[key] = p
            while len(_CACHE) > CACHE_ENTRIES:
                _CACHE.popitem(last=False)
    return p


def light_lines(spec: TaskSpec, p: KernelProfile, gpu_name: str) -> list[str]:
    """The task's speed of light at the profile's shape: on a GPU, this one's and the share of it
    the profiled kernels' summed Nsight Compute durations reach; on CPU, each judged GPU's."""
    if p.device != "cuda":
        per_gpu = "; ".join(f"{g} {speed_of_light(spec, p.shape, g).describe()}" for g in JUDGED_GPUS)
        return [f"Speed of light at this shape: {per_gpu}."]
    light = speed_of_light(spec, p.shape, gpu_name)
    lines = [f"Speed of light at this shape on {gpu_name}: {light.describe()}."]
    total_us = sum(c.get("duration_us") or 0.0 for c in p.counters.get("kernels", []))
    share = fraction(light.ms, total_us * 1e-3)
    if share is not None:
        lines.append(f"The profiled forward's kernels took {total_us:.1f} us under Nsight Compute: {share:.0%} of "
                     "the speed of light (the verdict's timing is the figure the reward reads).")
    return lines


def instruction_evidence(spec: TaskSpec, profiles: dict[str, KernelProfile | None]) -> dict:
    """For a task with ``mma_operands``: each profiled source's instruction evidence
    (``decide/instructions.evidence``, the verdict's rule) read from its profile's kernels, by role;
    ``{}`` for another task."""
    if not spec.mma_operands:
        return {}
    return {role: evidence(spec, {"kernels": p.kernels}) for role, p in profiles.items() if p is not None and p.ok}


def profile_report(evaluator, task_id: str, source: str, device: str = "auto", lane=None, counters: bool = True,
                   expert: bool = True) -> dict:
    """``{"candidate", "expert", "units", "instructions", "text"}``: the profiles of ``source`` and
    (``expert``) of the task's expert solution, as dicts; each unit's metric for both
    (``unit_metrics``); the instruction evidence of both on a precision task
    (``instruction_evidence``); and the rendered text (``report.render``, then those lines)."""
    spec, device = get_task(task_id), resolve_device(device)
    candidate = profile_source(evaluator, task_id, source, device, lane, counters)
    theirs = None
    if expert and spec.solution is not None:
        theirs = profile_source(evaluator, task_id, solution_source(spec), device, lane, counters)
    gpu = software_versions(device, spec).get("gpu", "")
    units = unit_metrics(spec, candidate, theirs)
    found = instruction_evidence(spec, {"candidate": candidate, "expert": theirs})
    shown = [f"{role.capitalize()}: {e['message']}" for role, e in found.items()]
    text = render(candidate, theirs, light_lines(spec, candidate, gpu) + shown + unit_lines(units))
    return {"candidate": candidate.to_dict(), "expert": theirs.to_dict() if theirs else None, "units": units,
            "instructions": found, "text": text}


__all__ = ["CPU_RECORDING_BYTES", "instruction_evidence", "light_lines", "profile_report", "profile_shape",
           "profile_source"]
