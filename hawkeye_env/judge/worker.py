"""The worker: the only process that imports candidate code.

``run_job`` receives a job (task, candidate source, trials, timing plan) from the parent, imports
the candidate from a private file, runs it and the reference on fresh inputs in the order each
trial asks for, and returns raw material only: outputs, float64 reference outputs, raw times and
what the guards saw. It decides nothing; ``evaluator.py`` in the parent does. Replies are encoded
with ``torch.save`` and decoded by the parent with ``weights_only=True``, so nothing the worker
sends can execute code in the parent.
"""

from __future__ import annotations

import copy
import importlib.util
import io
import os
import resource
import sys
import tempfile
import traceback

import torch

from hawkeye_env.judge import guards
from hawkeye_env.judge.inputs import make_inputs, randomize_parameters
from hawkeye_env.tasks.registry import get_task, task_module

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
    _start_thread_pools()


def _start_thread_pools() -> None:
    """Let BLAS and OpenMP start their lazily created threads now, so that the thread count taken
    around a candidate's forward (REWARD_HACKS #4) sees only threads the candidate started."""
    import numpy as np

    for dtype in (np.float32, np.float64):
        a = np.ones((256, 256), dtype=dtype)
        a @ a
    t = torch.ones(256, 256)
    t @ t


def _import_candidate(source: str, name: str):
    folder = tempfile.mkdtemp(prefix="hawkeye-candidate-")
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


def _to_device(model: torch.nn.Module, device: str) -> torch.nn.Module:
    return model.to(device)


class _Run:
    """State of one job: the candidate module, guards and the collected observations."""

    def __init__(self, job: dict):
        self.job = job
        self.device = job["device"]
        self.spec = get_task(job["task"])
        self.task = task_module(self.spec)
        self.name = job["module_name"]
        self.counter = guards.LaunchCounter()
        self.counter.install()
        self.snapshot = guards.JudgeSnapshot()
        self.violations: list[list[str]] = []
        self.candidate = None

    def violate(self, code: str, message: str) -> None:
        if [code, message] not in self.violations:
            self.violations.append([code, message])

    def build(self, shape: dict, distribution: str, seed: int):
        init = self.task.get_init_inputs(**shape)
        torch.manual_seed(seed)
        ref = self.task.Model(*init)
        randomize_parameters(ref, distribution, seed)
        torch.manual_seed(seed)
        new = self.candidate.ModelNew(*init)
        if not isinstance(new, torch.nn.Module):
            raise TypeError("ModelNew(...) must return a torch.nn.Module")
        missing = new.load_state_dict(ref.state_dict(), strict=False).missing_keys
        if missing:
            raise TypeError(f"ModelNew lacks the reference's parameters/buffers {missing}")
        return _to_device(ref, self.device), _to_device(new, self.device)

    def call_candidate(self, model, inputs: list) -> list:
        """One guarded candidate forward with poisoned allocations."""
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
            self.violate("threads_spawned", "forward left new threads running")
        for i, (x, y) in enumerate(zip(before, inputs)):
            if isinstance(x, torch.Tensor) and not torch.equal(x, y):
                self.violate("input_mutated", f"forward changed input {i}")
        for i, o in enumerate(outs):
            if type(o) is not torch.Tensor:
                self.violate("output_not_tensor", f"output {i} is {type(o).__name__}, not torch.Tensor")
            elif o.device.type != torch.device(self.device).type:
                self.violate("output_not_tensor", f"output {i} is on {o.device}, not {self.device}")
        return outs

    def trial(self, t: dict) -> dict:
        shape, dist, seed = t["shape"], t["distribution"], t["seed"]
        ref, new = self.build(shape, dist, seed)
        inputs = make_inputs(self.task, shape, dist, seed, self.device)
        if t["order"] == "reference_first":
            expected = [o.dtype for o in _as_list(ref(*inputs))]
            outs = self.call_candidate(new, inputs)
        else:
            outs = self.call_candidate(new, inputs)
            expected = [o.dtype for o in _as_list(ref(*inputs))]
        row = {
            "outputs": [o.detach().cpu() if type(o) is torch.Tensor else None for o in outs],
            "reference": self.reference64(ref, inputs),
            "expected_dtypes": [str(d).removeprefix("torch.") for d in expected],
        }
        if t.get("rerun"):
            again = self.call_candidate(new, inputs)
            row["rerun"] = [o.detach().cpu() if type(o) is torch.Tensor else None for o in again]
        return row

    def reference64(self, ref, inputs: list) -> list:
        ref64 = copy.deepcopy(ref).double()
        args = [x.double() if isinstance(x, torch.Tensor) and x.is_floating_point() else x for x in inputs]
        return [o.detach().double().cpu() for o in _as_list(ref64(*args))]

    def timing(self, plan: dict) -> dict:
        from hawkeye_env.judge.timing import time_callable

        shape = self.spec.gpu_shapes[0]
        seed = plan["seed"]
        ref, new = self.build(shape, "normal", seed)
        inputs = make_inputs(self.task, shape, "normal", seed, self.device)
        fns = {"candidate": new}
        if "eager" in plan["baselines"]:
            fns["eager"] = ref
        if "compile" in plan["baselines"]:
            fns["compile"] = torch.compile(ref)
        result = {}
        for name, fn in fns.items():
            t = time_callable(fn, inputs, plan["iters"], plan["retries"], seed)
            kept = t.pop("kept")
            if name == "candidate":
                t["kept"] = [
                    {"outputs": [o.detach().cpu() for o in _as_list(out)],
                     "reference": self.reference64(ref, ins)}
                    for ins, out in kept
                ]
            result[name] = t
        return result


def run_job(job: dict) -> dict:
    """Judge-side raw observations for one candidate; never raises."""
    reply: dict = {"stage": "ok", "error": "", "violations": [], "trials": [], "timing": {}}
    run = _Run(job)
    try:
        run.candidate = _import_candidate(job["source"], run.name)
    except BaseException as exc:  # noqa: BLE001 - any failure of candidate import is a verdict
        reply.update(stage="compile_error", error=_short_traceback(exc, run.name))
        return reply
    if not isinstance(getattr(run.candidate, "ModelNew", None), type):
        reply.update(stage="no_source", error="the source defines no class ModelNew")
        return reply
    stage = "build"
    try:
        for t in job["trials"]:
            stage = "build"
            reply["trials"].append(run.trial(t))
            if run.violations:
                break
        if job.get("timing") and not run.violations:
            stage = "timing"
            reply["timing"] = run.timing(job["timing"])
    except BaseException as exc:  # noqa: BLE001 - a raising candidate is a verdict, not a crash
        kind = "compile_error" if stage == "build" and not reply["trials"] and _is_init_error(exc) else "runtime_error"
        reply.update(stage=kind, error=_short_traceback(exc, run.name))
    changed = run.snapshot.changed()
    if changed:
        run.violate("judge_patched", f"replaced judge functions: {', '.join(changed)}")
    reply["violations"] = run.violations
    reply["launches"] = dict(run.counter.launches)
    return reply


def _is_init_error(exc: BaseException) -> bool:
    tb = traceback.extract_tb(exc.__traceback__)
    return any(frame.name == "__init__" for frame in tb)


def serve(conn, device: str, memory_limit_bytes: int) -> None:
    """Process entry point: read one job (JSON bytes), reply with ``torch.save`` bytes, exit."""
    import json

    _setup(device, memory_limit_bytes)
    job = json.loads(conn.recv_bytes().decode("utf-8"))
    reply = run_job(job)
    buf = io.BytesIO()
    torch.save(reply, buf)
    conn.send_bytes(buf.getvalue())
    conn.close()
