"""The worker: the only process that imports candidate code.

``run_job`` receives a job (task, candidate source, trials, timing plan) from the parent, imports
the candidate from a private file, and returns raw material only: on CUDA (``record`` jobs) the
launch plan of one guarded forward per shape, recorded on seeds the verdict's replay never uses
(``plan_recorder.py``); elsewhere the outputs of every trial, run beside the reference in the order
each trial asks for, and raw times where the job asks for timing; and what the guards saw. It
decides nothing; the parent does (``evaluator.py``, ``replayed.py``). Replies are encoded
with ``torch.save`` and decoded by the parent with ``weights_only=True``, so nothing the worker
sends can execute code in the parent.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import sys
import tempfile
import time
import traceback

import torch

from hawkeye_env.judge.sandboxed.candidate import guards, unit_caches
from hawkeye_env.judge.sandboxed.candidate.interpreter_recorder import install_interpreter_hooks
from hawkeye_env.judge.sandboxed.candidate.plan_recorder import NotReplayable, PlanRecorder, install_launch_hooks
from hawkeye_env.judge.sandboxed.common.back_to_back import time_back_to_back
from hawkeye_env.judge.sandboxed.common.interpreter.not_checkable import failure_fields
from hawkeye_env.judge.sandboxed.common.serve_loop import deterministic, enter_lane, lane_request, send, serve_jobs  # noqa: F401 - re-exported
from hawkeye_env.judge.shared.inputs import (
    CARRIED_BUDGET_S,
    NATIVE,
    carried_seed,
    derived_seed,
    fresh_seed,
    make_inputs,
    randomize_parameters,
)
from hawkeye_env.judge.shared.verdict import MAX_VIOLATIONS
from hawkeye_env.judge.shared.wire import Job, Reply
from hawkeye_env.tasks.registry import get_task, register_tasks_from, task_module, user_task_dirs

TRACEBACK_LINES = 12


def _import_candidate(source: str, name: str, folder: str | None):
    """Write the source to ``folder`` (removed by the parent after the job) and import it: Triton
    reads kernel source from the file, and tracebacks quote its lines."""
    folder = folder or tempfile.mkdtemp(prefix="hawkeye-candidate-")
    path = os.path.join(folder, f"{name}.py")
    with open(path, "w", encoding="utf-8") as f:
        f.write(source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _short_traceback(exc: BaseException, candidate_file_hint: str) -> str:
    lines = traceback.format_exception(type(exc), exc, exc.__traceback__)
    text = "".join(lines).strip().splitlines()
    keep = [ln for ln in text if candidate_file_hint in ln or not ln.startswith("  File")]
    return "\n".join((keep or text)[-TRACEBACK_LINES:])


def _as_list(out) -> list:
    return list(out) if isinstance(out, (tuple, list)) else [out]


# Tensor methods the worker calls on the candidate's tensors, taken when this module is imported,
# before the candidate is: called on the class, a method planted on one tensor never runs here.
_DETACH, _CPU, _CLONE = torch.Tensor.detach, torch.Tensor.cpu, torch.Tensor.clone


def _host(o: torch.Tensor) -> torch.Tensor:
    """A detached host copy of ``o`` that owns its storage (on CPU too, where ``cpu()`` would
    share the candidate's: code it runs later, a constructor say, could rewrite a checked output),
    through the methods taken before the candidate's import."""
    return _CLONE(_DETACH(o)) if o.device.type == "cpu" else _CPU(_DETACH(o))


def build_seed(seed: int) -> int:
    """The seed ``ModelNew`` is constructed under: one-way from the trial's. The constructor runs
    unrecorded and can read the generator's output back to its seed; from this one it cannot
    reach the trial's seed, from which the inputs are drawn."""
    return derived_seed(seed, "build")


class BuildError(Exception):
    """``ModelNew(*init)`` or its state-dict load failed: a compile error, not a runtime one."""


class _Run:
    """State of one job: the candidate module, guards and the collected observations."""

    def __init__(self, job: Job):
        self.job = job
        self.device = job["device"]
        for folder in job.get("task_dirs") or []:
            if folder not in user_task_dirs():
                register_tasks_from(folder)
        self.spec = get_task(job["task"])
        self.task = task_module(self.spec)
        self.name = job["module_name"]
        self.counter = guards.LaunchCounter()
        self.counter.install()
        guards.install_tensor_str_hook()
        guards.install_tensor_data_hook()
        if self.device == "cuda":
            install_launch_hooks()
        else:
            install_interpreter_hooks()
        self.snapshot = guards.JudgeSnapshot()
        self.violations: list[list[str]] = []
        self.candidate = None
        self.report = lambda violations: None
        self.models: list = []  # kept alive until the reply is sent: no __del__ runs mid-job
        self.profile: dict[str, float] = {}  # seconds per step, summed over trials

    def spent(self, step: str, since: float) -> None:
        self.profile[step] = self.profile.get(step, 0.0) + time.monotonic() - since

    def violate(self, code: str, message: str) -> None:
        if [code, message] not in self.violations and len(self.violations) < MAX_VIOLATIONS:
            self.violations.append([code, message])

    def build(self, shape: dict, distribution: str, seed: int):
        init = self.task.get_init_inputs(**shape)
        torch.manual_seed(seed)
        ref = self.task.Model(*init)
        randomize_parameters(ref, distribution, seed, self.device)
        torch.manual_seed(build_seed(seed))
        try:
            new = self.candidate.ModelNew(*init)
            if not isinstance(new, torch.nn.Module):
                raise TypeError("ModelNew(...) must return a torch.nn.Module")
            # missing_keys: ModelNew's own entries the reference's state dict does not fill. Every
            # parameter and persistent buffer comes from the reference (the GPU replay reads them
            # from the reference too); keep extra constants as plain attributes or non-persistent.
            extra = new.load_state_dict(ref.state_dict(), strict=False).missing_keys
            if extra:
                raise TypeError(f"ModelNew has parameters/persistent buffers the reference lacks: {extra}; "
                                "every one is loaded from the reference's state dict")
            new = new.to(self.device)
        except Exception as exc:
            raise BuildError(_short_traceback(exc, self.name)) from exc
        self.models.append(new)
        return ref.to(self.device), new

    def call_candidate(self, model, inputs: list, recorder: PlanRecorder | None = None) -> list:
        """One guarded candidate forward with poisoned allocations (``recorder``: recording its
        launch plan too)."""
        started = time.monotonic()
        try:
            return self._call_candidate(model, inputs, recorder)
        finally:
            self.spent("candidate_calls_s", started)
            if "first_candidate_call_s" not in self.profile:
                self.profile["first_candidate_call_s"] = time.monotonic() - started

    def _call_candidate(self, model, inputs: list, recorder: PlanRecorder | None) -> list:
        before = [_CLONE(x) if isinstance(x, torch.Tensor) else x for x in inputs]
        threads = guards.thread_count()
        deterministic(True)
        refused = len(self.counter.refusals)
        try:
            with guards.recording(self.counter) as rec, (recorder or contextlib.nullcontext()):
                outs = _as_list(model(*inputs))
                if self.device == "cuda":
                    torch.cuda.synchronize()
        finally:
            deterministic(False)
        self._refused_launches(refused)
        bad = rec.disallowed(self.spec.allowed_ops, self.device)
        if bad:
            ops = ", ".join(f"aten.{k} x{v}" for k, v in sorted(bad.items()))
            self.violate("torch_compute_op", f"forward called torch ops outside the allowlist: {ops}")
        if self.counter.own_launches(self.name) == 0:
            self.violate("no_kernel_launch", "forward launched no Triton kernel of its own or of a unit")
        if guards.thread_count() > threads:
            self.violate("threads_spawned", "forward left new threads or child processes running")
        changed = self.snapshot.changed()
        if changed:
            self.violate("judge_patched", f"replaced judge functions: {', '.join(changed[:8])}")
        planted = guards.planted_attributes(outs, "output") + guards.planted_attributes(inputs, "input")
        if planted:
            self.violate("judge_patched", f"attributes set on tensors the judge reads: {'; '.join(planted[:4])}")
        for i, (x, y) in enumerate(zip(before, inputs)):
            if isinstance(x, torch.Tensor) and not torch.equal(x, y):
                self.violate("input_mutated", f"forward changed input {i}")
        for i, o in enumerate(outs):
            if type(o) is not torch.Tensor:
                self.violate("output_not_tensor", f"output {i} is {type(o).__name__}, not torch.Tensor")
            elif o.device.type != torch.device(self.device).type:
                self.violate("output_not_tensor", f"output {i} is on {o.device}, not {self.device}")
        if self.violations:
            self.report(self.violations)
        return outs

    def _refused_launches(self, before: int) -> None:
        """A launch refused or failed since ``before`` while forward still returned: it caught the
        error, which may carry what the kernel read (``launch_values.launch_value``)."""
        if len(self.counter.refusals) > before:
            self.violate("forbidden_call", "forward went on after a kernel launch failed or was refused: "
                         + "; ".join(self.counter.refusals[before:before + 3]))

    def guarded_call(self, model, inputs: list):
        """A timed-loop call with the op recorder and launch counter on (warm-up and kept
        iterations): torch fallbacks and skipped launches are violations there too."""
        refused = len(self.counter.refusals)
        with guards.recording(self.counter) as rec:
            out = model(*inputs)
        self._refused_launches(refused)
        planted = guards.planted_attributes(_as_list(out), "output") + guards.planted_attributes(inputs, "input")
        if planted:
            self.violate("judge_patched", f"attributes set on tensors the judge reads: {'; '.join(planted[:4])}")
        bad = rec.disallowed(self.spec.allowed_ops, self.device)
        if bad:
            ops = ", ".join(f"aten.{k} x{v}" for k, v in sorted(bad.items()))
            self.violate("torch_compute_op", f"forward called torch ops outside the allowlist while timed: {ops}")
        if self.counter.own_launches(self.name) == 0:
            self.violate("no_kernel_launch", "forward launched no Triton kernel of its own or of a unit while timed")
        if self.violations:
            self.report(self.violations)
        return out

    def trial(self, t: dict) -> dict:
        shape, dist, seed = t["shape"], t["distribution"], t["seed"]
        started = time.monotonic()
        ref, new = self.build(shape, dist, seed)
        self.spent("build_s", started)
        started = time.monotonic()
        inputs = make_inputs(self.task, shape, dist, seed, self.device, t.get("layout"))
        self.spent("inputs_s", started)
        if t["order"] == "reference_first":
            expected = [o.dtype for o in _as_list(ref(*inputs))]
            outs = self.call_candidate(new, inputs)
        else:
            outs = self.call_candidate(new, inputs)
            expected = [o.dtype for o in _as_list(ref(*inputs))]
        row = {
            "outputs": [_host(o) if type(o) is torch.Tensor else None for o in outs],
            "expected_dtypes": [str(d).removeprefix("torch.") for d in expected],
        }
        if t.get("rerun"):
            started = time.monotonic()
            for i in range(int(t.get("carried", 0))):  # outputs unchecked
                if time.monotonic() - started > CARRIED_BUDGET_S:
                    break
                self.call_candidate(new, make_inputs(self.task, shape, dist, carried_seed(seed, i), self.device,
                                                     t.get("layout")))
            fresh = make_inputs(self.task, shape, dist, fresh_seed(seed), self.device, t.get("layout"))
            outs = self.call_candidate(new, fresh)
            row["fresh"] = {
                "outputs": [_host(o) if type(o) is torch.Tensor else None for o in outs],
            }
            again = self.call_candidate(new, inputs)
            row["rerun"] = [_host(o) if type(o) is torch.Tensor else None for o in again]
        return row

    def protocol_trial(self, t: dict) -> dict:
        """``trial`` for a trial of another protocol (``t["protocol"]``, KernelBench's): a raise
        there fails that protocol's trial, ``{"outputs": [], "error": traceback}``, and not the
        verdict; a violation still decides the verdict. A raise skips the checks after the call,
        so the ones whose effect outlives it run here: threads left running (they could work
        during the timed loop) and replaced judge functions."""
        threads = guards.thread_count()
        try:
            return self.trial(t)
        except Exception as exc:  # noqa: BLE001 - the protocol's own failure, reported beside the verdict
            if guards.thread_count() > threads:
                self.violate("threads_spawned", "forward left new threads or child processes running")
            changed = self.snapshot.changed()
            if changed:
                self.violate("judge_patched", f"replaced judge functions: {', '.join(changed[:8])}")
            if self.violations:
                self.report(self.violations)
            return {"outputs": [], "error": _short_traceback(exc, self.name)}

    def record(self, t: dict) -> dict:
        """Record the launch plan of one forward on the trial's inputs (``launch_plan.py``; on CPU
        the kernels as source, ``interpreter_recorder.py``):
        ``{"plan": ..., "kernels": [...]}``, or ``{"refused": reason}`` when the forward cannot be
        replayed. The trial's seed is not one the verdict's replay uses. A ``warm`` trial records
        the model's second forward: its first, on other inputs, is recorded and dropped, so what it
        made and kept is device memory from before the recorded call (a constant of the plan)."""
        shape, dist, seed = t["shape"], t["distribution"], t["seed"]
        ref, new = self.build(shape, dist, seed)
        inputs = make_inputs(self.task, shape, dist, seed, self.device, t.get("layout"))
        expected = ref.state_dict()
        params = {k: v for k, v in new.state_dict(keep_vars=True).items() if k in expected}
        for k, v in params.items():
            if v.shape != expected[k].shape or not torch.equal(_DETACH(v), expected[k].to(v.dtype)):
                return {"refused": f"parameter {k} differs from the reference's after loading the state dict "
                                   "(a load hook changed it): derive weights inside forward"}
        if t.get("warm"):
            other = make_inputs(self.task, shape, dist, (seed + 1) % 2**31, self.device, t.get("layout"))
            unit_caches.warm(self.device)
            self.call_candidate(new, other, PlanRecorder(other, params, self.device))
        unit_caches.warm(self.device)  # a unit's cached buffer is a constant of the plan
        recorder = PlanRecorder(inputs, params, self.device)
        outs = self.call_candidate(new, inputs, recorder)
        try:
            return {"plan": recorder.plan(outs), "kernels": recorder.kernels}
        except NotReplayable as exc:
            return {"refused": str(exc)}

    def timing(self, plan: dict) -> dict:
        """Time the candidate (guarded) with ``timing.time_callable``. Baselines are never timed
        here: a process that ran candidate code could slow them down (baseline-only workers,
        ``baselines.measure_missing``, time them)."""
        from hawkeye_env.judge.sandboxed.common.timing import time_callable

        shape = self.spec.gpu_shapes[0]
        seed = plan["seed"]
        _, new = self.build(shape, "normal", seed)
        inputs = make_inputs(self.task, shape, "normal", seed, self.device)
        t = time_callable(new, inputs, plan["iters"], plan["retries"], seed, keep=plan.get("keep", 2),
                          guarded=self.guarded_call)
        t["kept"] = [
            {"outputs": [_host(o) for o in _as_list(out)], "refills": refills}
            for (_, out), refills in zip(t.pop("kept"), t.pop("kept_refills"))
        ]
        kb = plan.get("kernelbench")
        if kb:  # KernelBench's protocol: its back-to-back timing on the file's own inputs
            _, model = self.build(dict(kb["shape"]), NATIVE, kb["seed"])
            inputs = make_inputs(self.task, dict(kb["shape"]), NATIVE, kb["seed"], self.device)
            t["kernelbench_ms"] = time_back_to_back(lambda *xs: self.guarded_call(model, list(xs)), inputs,
                                                    int(kb["trials"]))
        return {"candidate": t}


def run_job(job: Job, report=lambda violations: None, lane=lambda mode: None) -> Reply:
    """Judge-side raw observations for one candidate; never raises.

    ``report(violations)`` is called as soon as a candidate call produced a violation, so the
    parent keeps what was seen even if the candidate later hangs or kills the worker.
    ``lane(mode)`` blocks until the parent holds the GPU's lock in ``mode`` for this worker:
    ``exclusive`` around the timed section, ``none`` once the GPU work is done (``lanes.py``).
    """
    reply: Reply = {"stage": "ok", "error": "", "violations": [], "trials": [], "timing": {}, "profile": {}}
    if job.get("record"):
        reply["plans"] = []
    profile = reply["profile"]
    clock = time.monotonic()

    def lap(stage: str) -> None:
        nonlocal clock
        now = time.monotonic()
        profile[stage] = profile.get(stage, 0.0) + now - clock
        clock = now

    run = _Run(job)
    run.report = report
    try:
        run.candidate = _import_candidate(job["source"], run.name, job.get("workdir"))
    except BaseException as exc:  # noqa: BLE001 - any failure of candidate import is a verdict
        reply.update(stage="compile_error", error=_short_traceback(exc, run.name))
        return reply
    lap("import_s")
    if not isinstance(getattr(run.candidate, "ModelNew", None), type):
        reply.update(stage="no_source", error="the source defines no class ModelNew")
        return reply
    try:
        for t in job["trials"]:
            if job.get("record"):
                reply["plans"].append(run.record(t))
                if "refused" in reply["plans"][-1]:  # it decides the verdict: record no more shapes
                    break
            elif t.get("protocol"):
                reply["trials"].append(run.protocol_trial(t))
            else:
                reply["trials"].append(run.trial(t))
            lap("trials_gpu_shape_s" if t["shape"] == dict(run.spec.gpu_shapes[0]) else "trials_small_shape_s")
            if run.violations:
                break
        if job.get("timing") and not run.violations:
            lane("exclusive")
            lap("lane_exclusive_wait_s")
            reply["timing"] = run.timing(job["timing"])
            lap("timing_s")
        lane("none")  # every output is on the host now: the reply is encoded off the GPU's lock
    except BuildError as exc:
        reply.update(stage="compile_error", error=str(exc))
    except BaseException as exc:  # noqa: BLE001 - a raising candidate is a verdict, not a crash
        reply.update(stage="runtime_error", error=_short_traceback(exc, run.name), **failure_fields(exc))
    profile.update({f"step.{k}": v for k, v in run.profile.items()})
    changed = run.snapshot.changed()
    if changed:
        run.violate("judge_patched", f"replaced judge functions: {', '.join(changed[:8])}")
    reply["violations"] = run.violations
    return reply



# Names the tests and older callers use for the shared plumbing.
_send, _lane_request = send, lane_request


def serve(conn, device: str, memory_limit_bytes: int, standby_lane: dict | None = None) -> None:
    """The candidate worker's entry point: ``worker_process.serve_jobs`` with ``run_job``."""
    serve_jobs(conn, device, memory_limit_bytes, standby_lane, run_job)
