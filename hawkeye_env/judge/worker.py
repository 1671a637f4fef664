"""The worker: the only process that imports candidate code.

``run_job`` receives a job (task, candidate source, trials, timing plan) from the parent, imports
the candidate from a private file, runs it and the reference on fresh inputs in the order each
trial asks for, and returns raw material only: outputs, float64 reference outputs, raw times and
what the guards saw. It decides nothing; ``evaluator.py`` in the parent does. Replies are encoded
with ``torch.save`` and decoded by the parent with ``weights_only=True``, so nothing the worker
sends can execute code in the parent.
"""

from __future__ import annotations

import importlib.util
import io
import os
import resource
import sys
import tempfile
import time
import traceback

import torch
import torch.utils.deterministic

from hawkeye_env.judge import guards
from hawkeye_env.judge.inputs import make_inputs, randomize_parameters
from hawkeye_env.tasks.registry import get_task, register_tasks_from, task_module, user_task_dirs

TRACEBACK_LINES = 12


def _setup(device: str, memory_limit_bytes: int) -> None:
    if device == "cpu":
        os.environ["TRITON_INTERPRET"] = "1"
        torch.set_num_threads(1)
        from hawkeye_env.judge.cpu_backend import install_bf16_interpreter_fix

        install_bf16_interpreter_fix()
        if memory_limit_bytes:
            resource.setrlimit(resource.RLIMIT_AS, (memory_limit_bytes, memory_limit_bytes))
    torch.set_grad_enabled(False)
    # Poisoned allocations: with deterministic algorithms on (only around candidate calls),
    # torch.empty fills floats with NaN and integers with their max value (REWARD_HACKS #1, #16).
    torch.utils.deterministic.fill_uninitialized_memory = True


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


class BuildError(Exception):
    """``ModelNew(*init)`` or its state-dict load failed: a compile error, not a runtime one."""


class _Run:
    """State of one job: the candidate module, guards and the collected observations."""

    def __init__(self, job: dict):
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
        self.snapshot = guards.JudgeSnapshot()
        self.violations: list[list[str]] = []
        self.candidate = None
        self.report = lambda violations: None
        self.models: list = []  # kept alive until the reply is sent: no __del__ runs mid-job
        self.profile: dict[str, float] = {}  # seconds per step, summed over trials

    def spent(self, step: str, since: float) -> None:
        self.profile[step] = self.profile.get(step, 0.0) + time.monotonic() - since

    def violate(self, code: str, message: str) -> None:
        if [code, message] not in self.violations:
            self.violations.append([code, message])

    def build(self, shape: dict, distribution: str, seed: int):
        init = self.task.get_init_inputs(**shape)
        torch.manual_seed(seed)
        ref = self.task.Model(*init)
        randomize_parameters(ref, distribution, seed, self.device)
        torch.manual_seed(seed)
        try:
            new = self.candidate.ModelNew(*init)
            if not isinstance(new, torch.nn.Module):
                raise TypeError("ModelNew(...) must return a torch.nn.Module")
            missing = new.load_state_dict(ref.state_dict(), strict=False).missing_keys
            if missing:
                raise TypeError(f"ModelNew lacks the reference's parameters/buffers {missing}")
            new = new.to(self.device)
        except Exception as exc:
            raise BuildError(_short_traceback(exc, self.name)) from exc
        self.models.append(new)
        return ref.to(self.device), new

    def call_candidate(self, model, inputs: list) -> list:
        """One guarded candidate forward with poisoned allocations."""
        started = time.monotonic()
        try:
            return self._call_candidate(model, inputs)
        finally:
            self.spent("candidate_calls_s", started)
            if "first_candidate_call_s" not in self.profile:
                self.profile["first_candidate_call_s"] = time.monotonic() - started

    def _call_candidate(self, model, inputs: list) -> list:
        before = [x.clone() if isinstance(x, torch.Tensor) else x for x in inputs]
        threads = guards.thread_count()
        torch.use_deterministic_algorithms(True, warn_only=True)
        try:
            with guards.recording(self.counter) as rec:
                outs = _as_list(model(*inputs))
                if self.device == "cuda":
                    torch.cuda.synchronize()
        finally:
            torch.use_deterministic_algorithms(False)
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

    def guarded_call(self, model, inputs: list):
        """A timed-loop call with the op recorder and launch counter on (warm-up and kept
        iterations): torch fallbacks and skipped launches are violations there too."""
        with guards.recording(self.counter) as rec:
            out = model(*inputs)
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
        inputs = make_inputs(self.task, shape, dist, seed, self.device)
        self.spent("inputs_s", started)
        if t["order"] == "reference_first":
            expected = [o.dtype for o in _as_list(ref(*inputs))]
            outs = self.call_candidate(new, inputs)
        else:
            outs = self.call_candidate(new, inputs)
            expected = [o.dtype for o in _as_list(ref(*inputs))]
        row = {
            "outputs": [o.detach().cpu() if type(o) is torch.Tensor else None for o in outs],
            "expected_dtypes": [str(d).removeprefix("torch.") for d in expected],
        }
        if t.get("rerun"):
            again = self.call_candidate(new, inputs)
            row["rerun"] = [o.detach().cpu() if type(o) is torch.Tensor else None for o in again]
            fresh = make_inputs(self.task, shape, dist, seed + 1, self.device)
            outs = self.call_candidate(new, fresh)
            row["fresh"] = {
                "outputs": [o.detach().cpu() if type(o) is torch.Tensor else None for o in outs],
            }
        return row

    def timing(self, plan: dict) -> dict:
        """Time the candidate (guarded) with ``timing.time_callable``. Baselines are never timed
        here: a process that ran candidate code could slow them down (baseline-only workers,
        ``baselines.measure_missing``, time them)."""
        from hawkeye_env.judge.timing import time_callable

        shape = self.spec.gpu_shapes[0]
        seed = plan["seed"]
        _, new = self.build(shape, "normal", seed)
        inputs = make_inputs(self.task, shape, "normal", seed, self.device)
        t = time_callable(new, inputs, plan["iters"], plan["retries"], seed, keep=plan.get("keep", 2),
                          guarded=self.guarded_call)
        t["kept"] = [
            {"outputs": [o.detach().cpu() for o in _as_list(out)], "refills": refills}
            for (_, out), refills in zip(t.pop("kept"), t.pop("kept_refills"))
        ]
        return {"candidate": t}


def run_job(job: dict, report=lambda violations: None, lane=lambda mode: None) -> dict:
    """Judge-side raw observations for one candidate; never raises.

    ``report(violations)`` is called as soon as a candidate call produced a violation, so the
    parent keeps what was seen even if the candidate later hangs or kills the worker.
    ``lane(mode)`` blocks until the parent holds the GPU's lock in ``mode`` for this worker:
    ``exclusive`` around the timed section, ``none`` once the GPU work is done (``lanes.py``).
    """
    reply: dict = {"stage": "ok", "error": "", "violations": [], "trials": [], "timing": {}, "profile": {}}
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
        reply.update(stage="runtime_error", error=_short_traceback(exc, run.name))
    profile.update({f"step.{k}": v for k, v in run.profile.items()})
    changed = run.snapshot.changed()
    if changed:
        run.violate("judge_patched", f"replaced judge functions: {', '.join(changed[:8])}")
    reply["violations"] = run.violations
    reply["launches"] = dict(run.counter.launches)
    return reply


def _send(conn, message: dict) -> None:
    buf = io.BytesIO()
    torch.save(message, buf)
    conn.send_bytes(buf.getvalue())


def _pin_gpu(gpu: int) -> int:
    """Show this worker only visible GPU ``gpu`` (an index into the parent's visible devices), as
    device 0, and return the index to use. Called before CUDA is initialised, so the candidate
    cannot reach another GPU, where its work would escape this GPU's timer and synchronisation
    (REWARD_HACKS #3). If CUDA were already initialised the variable would be ignored: then the
    GPU is only selected."""
    if torch.cuda.is_initialized():
        return gpu
    visible = [s.strip() for s in os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",") if s.strip()]
    os.environ["CUDA_VISIBLE_DEVICES"] = visible[gpu] if gpu < len(visible) else str(gpu)
    return 0


def _lane_request(conn, mode: str) -> None:
    """Ask the parent for the GPU lock in ``mode`` and wait until it says go."""
    import json

    _send(conn, {"kind": "lane_request", "mode": mode})
    answer = json.loads(conn.recv_bytes().decode("utf-8"))
    if not answer.get("go"):
        raise RuntimeError(f"lane {mode} refused: {answer}")


def _prepare_lane(device: str, memory_limit_bytes: int, lane_info: dict) -> int | None:
    """Set the process up for ``device`` and its lane without touching CUDA: cache folders,
    interpreter or GPU pinning. Returns the GPU index to select (None: the default)."""
    os.environ.update({str(k): str(v) for k, v in (lane_info.get("env") or {}).items()})
    _setup(device, memory_limit_bytes)
    if device == "cuda" and lane_info.get("gpu") is not None:
        return _pin_gpu(int(lane_info["gpu"]))
    return None


def _take_gpu(conn, device: str, index: int | None):
    """On CUDA, wait for the shared lane lock, then create the CUDA context on GPU ``index``.
    Returns ``(lane, wait_s)``: the function that asks the parent for a lock mode, and the
    seconds spent waiting for it."""
    if device != "cuda":
        return (lambda mode: None), 0.0
    lane = lambda mode: _lane_request(conn, mode)  # noqa: E731
    waiting = time.monotonic()
    lane("shared")
    wait_s = time.monotonic() - waiting
    torch.cuda.init()
    if index is not None:
        torch.cuda.set_device(index)
    return lane, wait_s


def enter_lane(conn, device: str, memory_limit_bytes: int, lane_info: dict):
    """``_prepare_lane`` then ``_take_gpu``: the shared lane lock is held before the first CUDA
    call. Returns ``(lane, wait_s)``."""
    return _take_gpu(conn, device, _prepare_lane(device, memory_limit_bytes, lane_info))


def _warm_standby(conn, device: str, memory_limit_bytes: int, standby_lane: dict):
    """A standby's set-up before any job exists (``warmup.py``): host imports with no lock held,
    then under the shared lock the CUDA context and the device warm-up, giving the lock back
    between steps so a queued timed section goes first; the lock is dropped at the end. Returns
    ``(lane, spent)``: the lock-request function and the seconds of each step and of the lock
    waits, for the verdict's profile."""
    index = _prepare_lane(device, memory_limit_bytes, standby_lane)
    # Imported only now: on CPU, _prepare_lane has set TRITON_INTERPRET, which triton must see
    # before the warm-up kernel is defined.
    from hawkeye_env.judge.warmup import warm_device, warm_host

    spent = warm_host()
    started = time.monotonic()
    lane, wait_s = _take_gpu(conn, device, index)
    spent["context_s"] = time.monotonic() - started - wait_s
    waits = [wait_s]

    def checkpoint() -> None:
        waiting = time.monotonic()
        lane("shared")
        waits.append(time.monotonic() - waiting)

    spent.update(warm_device(device, checkpoint))
    lane("none")
    spent["lock_wait_s"] = sum(waits)
    return lane, spent


def _flush_output() -> None:
    """Push what Python and C stdio buffered to file descriptors 1 and 2 (the worker's output file,
    ``worker_entry.redirect_output``): before ``ready``, after which a standby's warm-up output is
    dropped, and before the final reply, after which the worker is killed."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BaseException:  # noqa: BLE001 - a candidate may have replaced or closed the stream
            pass
    try:
        import ctypes

        ctypes.CDLL(None).fflush(None)
    except BaseException:  # noqa: BLE001 - best effort
        pass


def _send_final(conn, reply: dict, path: str | None) -> None:
    """The final reply: written to ``path`` (a file the parent named, in the candidate's scratch
    folder, on ``/dev/shm`` when it has room) and announced with a small message, so gigabytes of
    GPU-shape outputs and references are written once and read once instead of being copied
    through the pipe in small chunks; through the pipe when there is no path or the file cannot be
    written (a full disk)."""
    if path:
        try:
            torch.save({"kind": "final", **reply}, path)
            _send(conn, {"kind": "final", "reply_file": True})
            return
        except OSError:
            try:
                os.unlink(path)
            except OSError:
                pass
    _send(conn, {"kind": "final", **reply})


def _profiled(job: dict, report, lane) -> dict:
    """``run_job`` under cProfile, its statistics written to ``<profile_dir>/<task>-<pid>.prof``
    (``sandbox.PROFILE_ENV``: a diagnostic of where a verdict's worker time goes, read with
    ``pstats``; written by the candidate's process, so never part of a verdict)."""
    import cProfile

    profiler = cProfile.Profile()
    reply = profiler.runcall(run_job, job, report, lane)
    try:
        os.makedirs(job["profile_dir"], exist_ok=True)
        profiler.dump_stats(os.path.join(job["profile_dir"], f"{job['task']}-{os.getpid()}.prof"))
    except OSError:
        pass
    return reply


def serve(conn, device: str, memory_limit_bytes: int, standby_lane: dict | None = None) -> None:
    """Process entry point: read one job (JSON bytes), send progress and the final reply as
    ``torch.save`` bytes, then exit at once so no candidate finaliser (``__del__``, atexit) runs.

    On CUDA the worker pins its lane's GPU and waits for the shared lane lock before anything
    touches CUDA; the lane's cache folders are set before anything compiles.

    With ``standby_lane`` (``standby.py``) the worker sets up that lane before any job exists
    (``_warm_standby``: imports unlocked, then its CUDA context, cuBLAS and Triton's runtime under
    the shared lock), drops the lock, says ``ready`` and only then reads its one job, retaking the
    shared lock before it runs it. No candidate code has run in it before that job.

    Its stdout and stderr were pointed at a private file before this runs (``sandbox``'s
    ``redirect_output``); both are flushed before ``ready`` and before the final reply.
    """
    import json

    started = time.monotonic()
    profile: dict[str, float] = {}
    if standby_lane is not None:
        lane, warmed = _warm_standby(conn, device, memory_limit_bytes, standby_lane)
        profile.update({f"standby.{k}": v for k, v in warmed.items()})
        _flush_output()
        _send(conn, {"kind": "ready", "setup_s": time.monotonic() - started - warmed["lock_wait_s"]})
        try:
            job = json.loads(conn.recv_bytes().decode("utf-8"))
        except (EOFError, OSError):  # discarded unused (the parent's pool shut down): exit quietly
            os._exit(0)
        started = time.monotonic()
        lane("shared")
        lane_wait_s = time.monotonic() - started
        profile["standby"] = 1.0
    else:
        job = json.loads(conn.recv_bytes().decode("utf-8"))
        lane, lane_wait_s = enter_lane(conn, device, memory_limit_bytes, job.get("lane") or {})
    setup_s = time.monotonic() - started - lane_wait_s
    report = lambda violations: _send(conn, {"kind": "progress", "violations": violations})  # noqa: E731
    if job.get("profile_dir"):
        reply = _profiled(job, report, lane)
    else:
        reply = run_job(job, report, lane)
    reply["profile"] = {"worker_setup_s": setup_s, "lane_shared_wait_s": lane_wait_s, **profile,
                        **reply.get("profile", {})}
    _flush_output()
    _send_final(conn, reply, job.get("reply_path"))
    conn.close()
    os._exit(0)
