"""The one evaluator: candidate source in, ``Verdict`` out.

Every consumer — ``hawkeye check``, the Gymnasium env, the evals, the training reward — calls
``Evaluator.evaluate`` (or the module-level ``evaluate``). The flow:

1. trusted parent: empty/syntax checks and a fast filter (``static_checks.fast_filter``: a source
   that names neither Triton nor a unit); host code is otherwise free Python;
2. a fresh sandboxed worker process (``sandbox.py``) imports the candidate (``worker.py``) and
   records one launch plan per shape and layout; the parent checks the plans, and a trusted
   replay process that never imports the candidate runs them for every trial and for timing
   (``replayed.py``, ``replay.py``; on CPU the kernels rebuilt from their checked source under
   the interpreter, ``source_kernels.py``); the parent gets outputs, guard findings and raw times;
3. trusted parent: compares outputs in float64 against its own references (``correctness.py``),
   checks determinism, timed outputs, roofline floors and clocks, then scores the verdict with
   ``reward``;
4. the verdict is stored (``store.py``) under task, source hash, device, versions and config, so
   a repeated candidate is answered from the store.
"""

from __future__ import annotations

import ast
import logging
import os
import secrets
import threading
import time

import torch

from hawkeye_env.judge.parent import baselines, record_replay
from hawkeye_env.judge.parent.decide import (
    checks,
    correctness,
    instructions,
    kernelbench_protocol,
    references,
    roofline,
    speed_of_light,
    stall,
)
from hawkeye_env.judge.parent.decide.comparing import comparing_on
from hawkeye_env.judge.parent.decide.comparing import comparing_on as _comparing_on  # noqa: F401 - the tests' name
from hawkeye_env.judge.parent.decide.finish import finish_verdict
from hawkeye_env.judge.parent.eval_config import EvalConfig
from hawkeye_env.judge.parent.lanes import Lane, default_lane, make_lanes
from hawkeye_env.judge.parent.launch import isolation, run_job
from hawkeye_env.judge.parent.static import rules
from hawkeye_env.judge.parent.store import ResultStore, source_hash
from hawkeye_env.judge.parent.trial_plan import plan_trials
from hawkeye_env.judge.parent.validate import reply_check
from hawkeye_env.judge.parent.versions import resolve_device, software_versions
from hawkeye_env.judge.shared import timing_plan
from hawkeye_env.judge.shared.verdict import Failure, Stage, Verdict, Violation
from hawkeye_env.judge.shared.wire import Job, Reply
from hawkeye_env.tasks.registry import get_task, user_task_dirs
from hawkeye_env.tasks.spec import TaskSpec

log = logging.getLogger(__name__)

# The candidate timing fields a verdict reports (``timing.time_callable``'s result).
TIMING_REPORTED = ("median_ms", "scored_ms", "host_launch_ms", "host_launch_median_ms", "host_bound", "iqr_ms", "cv",
                   "attempts", "method", "spin_ms", "wall_median_ms", "check_event_median_ms", "check_wall_median_ms",
                   "round_median_ms")
# The error of a verdict whose judging failed inside the judge (never stored, so judged again).
JUDGE_ERROR = "judge_error"



def _single_threaded_after_fork() -> None:
    """torch's OpenMP pool does not survive ``fork``: a forked child that runs a parallel torch op
    (the parent-side comparison) can deadlock. Children forked from a judging process (for
    example gymnasium's AsyncVectorEnv workers) therefore compare on one thread."""
    torch.set_num_threads(1)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_single_threaded_after_fork)


class Evaluator:
    """Judges candidates; one instance can serve many calls and shares one results store."""

    def __init__(self, store: ResultStore | None = None, config: EvalConfig | None = None):
        """Raises ``isolation.SandboxUnavailable`` where the OS sandbox cannot run and
        ``$HAWKEYE_SANDBOX`` does not opt out of it: no candidate runs unsandboxed by accident."""
        isolation.require()
        self.store = store if store is not None else ResultStore()
        self.config = config or EvalConfig()

    def evaluate(self, task_id: str, source: str, device: str = "auto", use_cache: bool = True,
                 lane: Lane | None = None) -> Verdict:
        """Judge ``source`` on ``task_id``; never raises for anything the candidate does.

        ``lane`` (``lanes.py``) places the worker on a GPU with its caches and timing lock; by
        default the current GPU's lane. The batch API (``evaluate_many``) passes one per GPU.
        """
        start = time.monotonic()
        stall.MONITOR.ensure_running()
        spec = get_task(task_id)
        device = resolve_device(device)
        versions = software_versions(device, spec)
        digest = source_hash(source)
        key = (task_id, digest, device, versions, self.config.key())
        if use_cache:
            hit = self.store.get_verdict(*key)
            if hit is not None:
                verdict = Verdict.from_dict(hit)
                verdict.cached = True
                return verdict
        verdict = Verdict(task=task_id, device=device, stage=Stage.CORRECT, source_hash=digest, versions=versions)
        try:
            self._judge(spec, source, device, verdict, lane if lane is not None else default_lane(device))
        except Exception as exc:  # noqa: BLE001 - whatever happened, this candidate gets a verdict
            log.exception("judging %s on %s failed", digest[:12], task_id)
            failed = Verdict(task=task_id, device=device, stage=Stage.RUNTIME_ERROR, source_hash=digest,
                             versions=versions, compiled=verdict.compiled, profile=verdict.profile)
            failed.error, failed.failure = f"{JUDGE_ERROR}: {type(exc).__name__}: {exc}", Failure.JUDGE_ERROR
            return self._finish(failed, start, key, store=False)
        return self._finish(verdict, start, key, store=True)

    def _finish(self, verdict: Verdict, start: float, key: tuple, store: bool) -> Verdict:
        """Score, time-stamp and explain ``verdict``; store it unless the judge itself failed or a
        stall of the judge's own process timed its worker out (``stall.py``): such a verdict is a
        ``judge_error``, judged again next time."""
        stalled = stall.MONITOR.stalled_s(start, time.monotonic())
        failed = verdict.stage is Stage.RUNTIME_ERROR and not verdict.violations
        if store and stall.judge_caused_timeout(failed, verdict.profile, self.config.timeout_s, stalled):
            verdict.profile[stall.CAUSED_KEY] = stalled
            verdict.error = f"{JUDGE_ERROR}: {stall.explain(stalled, self.config.timeout_s)}\n{verdict.error}"
            verdict.failure = Failure.JUDGE_ERROR
            store = False
        if self.config.protocol == kernelbench_protocol.PROTOCOL:
            kernelbench_protocol.fill_unjudged(verdict, self.config.kernelbench_atol, self.config.kernelbench_rtol)
        verdict.wall_s = time.monotonic() - start
        finish_verdict(verdict)
        if store:
            self.store.put_verdict(*key, verdict.to_dict())
        return verdict

    def _judge(self, spec: TaskSpec, source: str, device: str, v: Verdict, lane: Lane | None = None) -> None:
        started = time.monotonic()
        passed = self.check_static(source, v)
        v.profile["static_s"] = time.monotonic() - started
        if not passed:
            return
        v.compiled = True
        seed = self.config.seed if self.config.seed is not None else secrets.randbelow(2**31)
        job = {
            "task": spec.id, "source": source, "device": device,
            "module_name": f"hawkeye_candidate_{v.source_hash[:12]}",
            "trials": plan_trials(spec, device, seed, self.config.protocol), "timing": None,
            "task_dirs": user_task_dirs(),
        }
        shape = dict(spec.gpu_shapes[0])
        if device != "cuda":
            job["reply_limit_bytes"] = run_job.SMALL_REPLY_BYTES
            self._run(spec, job, shape, {}, v, lane)
            return
        job["timing"] = {"seed": seed ^ 0xA5A5, "iters": self.config.iters, "retries": self.config.retries,
                         "baselines": []}  # baselines are timed by baseline-only workers, never here
        kb = next((t for t in job["trials"] if t.get("protocol") == kernelbench_protocol.PROTOCOL), None)
        if kb is not None:  # KernelBench's own timing, on its first trial's inputs (back_to_back.py)
            job["timing"]["kernelbench"] = {"trials": kernelbench_protocol.TIMED_TRIALS, "seed": kb["seed"],
                                            "shape": dict(kb["shape"])}
        started = time.monotonic()
        cached, waited = self.ensure_baselines(spec, device, v.versions, job["timing"]["seed"], lane)
        baselines_s = time.monotonic() - started
        self._run(spec, job, shape, cached, v, lane)
        kernelbench_protocol.set_baseline(v, cached.get(baselines.KERNELBENCH_EAGER))
        v.profile["baselines_s"] = baselines_s
        if waited is not None:
            v.profile["baseline_wait_s"] = waited

    def baseline_names(self, spec: TaskSpec) -> list[str]:
        """The baselines a CUDA verdict of ``spec`` reads: the judge's, the task's vendor ones, and
        with KernelBench's protocol the reference timed by its method (``KERNELBENCH_EAGER``)."""
        names = baselines.planned(spec, self.config.baselines, self.config.vendor_baselines)
        if self.config.protocol == kernelbench_protocol.PROTOCOL:
            names.append(baselines.KERNELBENCH_EAGER)
        return names

    def ensure_baselines(self, spec: TaskSpec, device: str, versions: dict, seed: int,
                         lane: Lane | None = None) -> tuple[dict, float | None]:
        """The task's stored baseline entries at its timed shape, having the missing ones measured
        first (CUDA). One verdict at a time has them measured, in a baseline-only worker with no
        candidate code, on ``lane`` under its timing lock; the others wait, then read them from the
        store. What that worker could not measure stays missing: the verdict has no speedup against
        it (a candidate's worker never times a baseline). Returns ``(entries, seconds waited for
        another measurement)``, the wait
        None when nothing was missing."""
        shape = dict(spec.gpu_shapes[0])
        names = self.baseline_names(spec)
        cached = baselines.cached_entries(self.store, spec.id, shape, device, versions, names)
        if all(n in cached for n in names):
            return cached, None
        waiting = time.monotonic()
        with baselines.MEASURING.lock(spec.id, shape, device, versions):
            waited = time.monotonic() - waiting
            cached = baselines.cached_entries(self.store, spec.id, shape, device, versions, names)
            missing = [n for n in names if n not in cached]
            if missing:
                plan = {"seed": seed, "iters": self.config.iters, "retries": self.config.retries,
                        "kernelbench_trials": kernelbench_protocol.TIMED_TRIALS}
                timeout_s = max(self.config.timeout_s, baselines.MEASURE_TIMEOUT_S)
                _, error = baselines.measure_missing(self.store, spec, shape, device, versions, missing, plan,
                                                     timeout_s, self._memory_limit_bytes(device), lane)
                if error:
                    log.warning("baseline worker for %s failed; its verdicts stay unscored for speed: %s",
                                spec.id, error[-500:])
                cached = baselines.cached_entries(self.store, spec.id, shape, device, versions, names)
        return cached, waited

    def prefetch_baselines(self, task_ids: list[str], device: str = "auto",
                           gpus: int | list[int] | None = None) -> dict[str, list[str]]:
        """Measure the missing baselines of ``task_ids`` ahead of their candidates: one thread per
        GPU lane takes the next task until none is left, so each GPU measures one task at a time
        and all GPUs work in parallel (CUDA; a no-op elsewhere). A batch of one task otherwise
        keeps its GPUs idle while its first verdict has them measured. Returns task -> the baseline
        names still missing afterwards (empty lists when all were measured)."""
        from concurrent.futures import ThreadPoolExecutor

        device = resolve_device(device)
        if device != "cuda" or not task_ids:
            return {}
        lanes = make_lanes(device, gpus)
        pending, taking, missing = list(task_ids), threading.Lock(), {}

        def lane_worker(lane: Lane) -> None:
            while True:
                with taking:
                    if not pending:
                        return
                    spec = get_task(pending.pop(0))
                versions = software_versions(device, spec)
                names = self.baseline_names(spec)
                seed = self.config.seed if self.config.seed is not None else secrets.randbelow(2**31)
                cached, _ = self.ensure_baselines(spec, device, versions, seed, lane)
                missing[spec.id] = [n for n in names if n not in cached]

        with ThreadPoolExecutor(max_workers=len(lanes)) as pool:
            for future in [pool.submit(lane_worker, lane) for lane in lanes]:
                future.result()
        return {task: missing[task] for task in task_ids}

    def _memory_limit_bytes(self, device: str) -> int:
        return self.config.memory_limit_bytes(device)

    def _run(self, spec: TaskSpec, job: Job, shape: dict, cached_baselines: dict, v: Verdict,
             lane: Lane | None) -> None:
        """Judge ``job`` and decide ``v``: on CUDA from the trusted replay of the launch plans the
        candidate's worker recorded (``replayed.py``), elsewhere from the worker's own reply;
        ``cached_baselines`` are the stored baseline entries."""
        device = job["device"]
        if record_replay.mode(device) == "replay":
            reply = record_replay.record_and_replay(job, spec.allowed_ops, self.config.timeout_s,
                                                    self._memory_limit_bytes(device), lane, v,
                                                    instructions=bool(spec.mma_operands))
        else:
            outcome = run_job.run_in_worker(job, self.config.timeout_s, self._memory_limit_bytes(device), lane)
            v.profile.update(record_replay.worker_profile(outcome))
            reply = None if record_replay.worker_failure(outcome, v) else outcome.reply
            problem = record_replay.checked(reply_check.reply_problem, job, reply) if reply is not None else None
            if problem:
                v.stage, v.violations, reply = Stage.REJECTED, [Violation("forged_reply", problem)], None
            elif reply is not None and isinstance(reply.get("profile"), dict):
                v.profile.update({f"worker.{k}": float(x) for k, x in reply["profile"].items()
                                  if isinstance(x, (int, float)) and not isinstance(x, bool)})
        if reply is None:
            return
        compare = time.monotonic()
        with comparing_on(lane, device) as compare_device:  # a failure here is the judge's (evaluate)
            v.profile["compare_lane_wait_s"] = time.monotonic() - compare
            self._read_reply(spec, job, reply, shape, compare_device, cached_baselines, v)
        v.profile["compare_s"] = time.monotonic() - compare

    def _read_reply(self, spec, job: Job, reply: Reply, shape, compare_device: str, cached_baselines,
                    v: Verdict) -> None:
        """Decide the verdict from the worker's reply (``reply_check`` found it fits the plan);
        outputs are compared on ``compare_device``."""
        if record_replay.decided_by_reply(reply, v):
            return
        v.instructions = instructions.evidence(spec, reply.get("instructions"))
        job, reply = kernelbench_protocol.judge_and_strip(spec, job, reply, compare_device, v,
                                                          self.config.kernelbench_atol, self.config.kernelbench_rtol)
        references.fill_trial_references(spec, job, reply, compare_device)
        if not checks.check_trials(spec, job["trials"], reply["trials"], v, compare_device):
            return
        v.correct, v.stage = True, Stage.CORRECT
        if reply.get("timing"):
            references.fill_kept_references(spec, job, reply, compare_device)
            self._check_timing(spec, shape, compare_device, reply["timing"], cached_baselines, v)

    def check_static(self, source: str, v: Verdict) -> bool:
        """Step 1 of the module docstring: whether ``source`` reaches a worker; otherwise ``v`` says
        why (no source, a syntax error, the fast filter's findings)."""
        if not source.strip():
            v.stage, v.error = Stage.NO_SOURCE, "empty candidate: no source code was given"
            return False
        if "ModelNew" not in source:
            v.stage, v.error = Stage.NO_SOURCE, "the source defines no class ModelNew"
            return False
        try:
            tree = rules.parse_source(source)
        except SyntaxError as exc:
            v.stage = Stage.COMPILE_ERROR
            v.error = f"SyntaxError: {exc.msg} (line {exc.lineno}, column {exc.offset})"
            return False
        except ValueError as exc:  # e.g. NUL bytes, which ast.parse refuses with ValueError
            v.stage, v.error = Stage.COMPILE_ERROR, f"unparsable source: {exc}"
            return False
        if not any(isinstance(n, ast.ClassDef) and n.name == "ModelNew" for n in ast.walk(tree)):
            v.stage, v.error = Stage.NO_SOURCE, "the source defines no class ModelNew"
            return False
        if self.config.static_checks:
            findings = rules.fast_filter(tree)
            if findings:
                v.violations = [Violation(f.code, f"line {f.line}: {f.message}") for f in findings]
                v.stage = Stage.REJECTED
                return False
        return True

    def _check_timing(self, spec, shape, compare_device: str, timing: dict, cached: dict, v: Verdict) -> None:
        """Decide the timed part of a correct verdict: kept timed outputs against their own inputs,
        the roofline floor and the clock check on the candidate's timing, then speedups of the
        scored times (``timing.py``: device time, the host launch reported beside it) over the
        stored baselines' scored times, measured the same way by baseline-only workers."""
        cand = timing["candidate"]
        kept = cand.get("kept", [])
        dtypes = [correctness.dtype_name(o.dtype) for o in kept[0]["native"]] if kept else []
        found, borderline = checks.check_kept(spec, kept, dtypes, compare_device)
        v.violations.extend(found)
        # measured by baseline-only workers; the reply holds the candidate only. KernelBench's
        # eager time belongs to its protocol's entry (set_baseline), never to our speedups.
        entries = {n: t for n, t in cached.items() if n != baselines.KERNELBENCH_EAGER}
        measured = {n: float(t.get("scored_ms") or t["median_ms"])
                    for n, t in entries.items() if "unavailable" not in t}
        v.baselines_unavailable = {
            n: baselines.short_reason(t["unavailable"]) for n, t in entries.items() if "unavailable" in t
        }
        device_ms = float(cand["median_ms"])
        scored = float(cand.get("scored_ms") or device_ms)
        v.timing = {k: cand.get(k) for k in TIMING_REPORTED}
        v.timing["precise"] = bool(cand["cv"] <= timing_plan.CV_GATE)
        v.times_ms = {"candidate": scored, **measured}
        v.vendor_baselines = [n for n in measured if n not in baselines.JUDGE_BASELINES]
        floor = roofline.floor_ms(
            spec.flops(**shape), spec.bytes_moved(**shape), spec.dtypes[0], v.versions.get("gpu", "")
        )
        v.timing["roofline_floor_ms"] = floor
        light = speed_of_light.speed_of_light(spec, shape, v.versions.get("gpu", ""), cand.get("sm_clock_mhz"))
        v.timing.update(sol_ms=light.ms, sol_bound=light.bound, sol_precision=light.precision,
                        sol_fraction=speed_of_light.fraction(light.ms, device_ms), sm_clock_mhz=light.clock_mhz)
        if device_ms < floor:
            v.violations.append(Violation(
                "impossible_time", f"{device_ms:.4f} ms is below the roofline floor {floor:.4f} ms",
            ))
        escaped = timing_plan.clock_violation(cand)
        if escaped:
            v.violations.append(Violation("timing_escape", escaped))
        if v.violations:
            v.stage, v.correct = Stage.REJECTED, False
            return
        if borderline:  # times stay reported, but an incorrect kernel gets no speedup
            v.stage, v.correct, v.error = Stage.INCORRECT, False, borderline
            return
        missing = [n for n in self.config.baselines if n not in measured]
        if missing:  # the baseline-only worker failed: the candidate is correct, its speed unscored
            v.error = f"judge baselines unavailable ({', '.join(missing)}): the speed cannot be scored"
            return
        v.timed = True
        v.speedup = {n: ms / scored for n, ms in measured.items() if scored > 0}

def evaluate_many(
    evaluator, jobs: list[tuple[str, str]], device: str = "auto", workers: int | None = None,
    use_cache: bool = True, on_verdict=None, gpus: int | list[int] | None = None,
) -> list[Verdict]:
    """Judge ``(task_id, source)`` pairs concurrently, one fresh worker process each; results in
    input order, every verdict written to the evaluator's store as it is reached.

    Identical pairs are judged once. ``workers`` bounds the candidates in flight (default: 2 on
    CPU, ``pool.WORKERS_PER_GPU`` per GPU on CUDA). On CUDA they are spread over ``gpus`` (how many
    visible GPUs, or which indices; default all); correctness trials overlap, timed sections never
    share a GPU (``lanes.py``). A worker that died without a verdict is retried once in a fresh
    worker (``pool.py``). ``on_verdict(index, verdict)`` is called as each verdict arrives
    (progress bars, incremental logging).

    ``evaluator`` is an ``Evaluator`` (this machine) or a scale-out backend with its own
    ``evaluate_many`` (``ray_backend.RayEvaluator``), which is then called with the same arguments.
    """
    if hasattr(evaluator, "evaluate_many"):
        return evaluator.evaluate_many(jobs, device, workers, use_cache, on_verdict, gpus)
    from hawkeye_env.judge.parent.batch.pool import judge_batch

    return judge_batch(evaluator, jobs, resolve_device(device), workers, use_cache, on_verdict, gpus)


_DEFAULT: Evaluator | None = None


def evaluate(task_id: str, source: str, device: str = "auto", use_cache: bool = True) -> Verdict:
    """Judge ``source`` on ``task_id`` with a process-wide default ``Evaluator``."""
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = Evaluator()
    return _DEFAULT.evaluate(task_id, source, device, use_cache)


__all__ = ["EvalConfig", "Evaluator", "evaluate", "evaluate_many", "plan_trials", "resolve_device", "software_versions"]
