"""The trusted replay: a candidate's launch plans run on the verdict's own inputs, no candidate Python.

On CUDA a verdict's outputs and times come from here, not from the candidate's worker. The worker
recorded, per shape, what its forward did (``plan_recorder.py``) on inputs drawn from seeds this
process never shares with it; the parent validated those plans (``plan_check.plan_problem``);
this process, started like every judge process in the OS sandbox but never importing candidate
code, loads the plans' compiled kernels with Triton's own loader and launcher, builds each trial's
reference model and inputs from the trial's seed (the task's code, which the user configured),
runs the plan and replies in the worker's reply format (``worker.run_job``): the same trial rows
and candidate timing, so the parent's checks apply unchanged.

What the candidate still controls: its kernels' device code (which sees only this process's GPU
buffers that the plan names, and whatever a GPU kernel can reach besides), the plan's launch
grids and scalars, the constants it made before its forward, and the device global variables of
its own cubins and Triton's global scratch (allocated per launch from this process's allocator and
reused), which keep their values from launch to launch. None of these can know the
replay's inputs. A correctness call that changes an input (``input_mutated``) or a parameter
(``state_mutated``) is a violation; constants may change (workspaces). A repeat trial's calls
replay the plan of a model's second forward, where what its first made and kept is a
constant too. Before the rerun, every constant whose bytes differ from the recorded ones is
filled with bytes drawn from the trial's seed (``PlanRunner.poison_changed``): a workspace the
kernels write before they read, and a counter they put back (split-K arrival counts), are
unaffected; a count kept in a constant reads as an arbitrary, almost always huge, number. Between
timed iterations, outside the timed window, the runner restores parameters and constants and
scrubs the storages the last call made (``PlanRunner.reset``). A kernel that counted its launches
in a device global or in scratch to skip work once timed would still show in the kept timed
outputs, drawn at random among all timed calls.
"""

from __future__ import annotations

import os
import time
import traceback

import torch
import torch.utils.deterministic
from torch.utils._pytree import tree_flatten

from hawkeye_env.judge.sandboxed.common.back_to_back import time_back_to_back
from hawkeye_env.judge.sandboxed.common.interpreter.not_checkable import failure_fields
from hawkeye_env.judge.sandboxed.common.serve_loop import deterministic, serve_jobs
from hawkeye_env.judge.sandboxed.replay.replay_kernels import Descriptor, folder_for, loader
from hawkeye_env.judge.sandboxed.replay.source_rebuild import RebuildError
from hawkeye_env.judge.shared import inputs as trial_inputs
from hawkeye_env.judge.shared.inputs import NATIVE, derived_seed, fresh_seed, make_inputs, randomize_parameters
from hawkeye_env.judge.shared.launch_plan import DTYPES, LAYOUTS, MEMORY_FORMATS, from_job
from hawkeye_env.judge.shared.verdict import MAX_VIOLATIONS
from hawkeye_env.judge.shared.wire import ReplayJob, Reply
from hawkeye_env.tasks.registry import get_task, register_tasks_from, task_module, user_task_dirs

TRACEBACK_LINES = 12


class PlanError(Exception):
    """The plan does not fit what the replay built (a candidate's plan, not a judge failure)."""


def _resolve_op(name: str):
    """The aten operator overload ``name`` names; ``PlanError`` for anything else (an attribute
    of the overload packet such as ``__setattr__`` is not an operator)."""
    packet, _, overload = name.removeprefix("aten::").partition(".")
    op = getattr(getattr(torch.ops.aten, packet, None), overload or "default", None)
    if not isinstance(op, torch._ops.OpOverload) or op.name() != name.removesuffix(".default"):
        raise PlanError(f"{name[:130]} is not an aten operator")
    return op


class PlanRunner:
    """One plan made callable: ``runner(*inputs) -> list of output tensors``.

    ``params`` is the reference model's state dict (its entries fill the plan's parameter bases,
    converted to the recorded dtype and layout); constants are copied in once. ``launches`` are
    ``load_kernels``' functions (or stand-ins of the same signature in tests).

    A call issues the plan with little host work of its own, so the host launch time the replay
    measures is the plan's (its launches and ops), not this class's: the steps are compiled once
    into a program, and a kernel's pointer arguments are passed as integers (storage address plus
    byte offset, which Triton's launcher takes as they are) rather than as tensor views.
    ``raw_pointers=False`` passes tensor views instead (stand-in kernels on CPU in the tests)."""

    def __init__(self, plan: dict, launches: list, params: dict[str, torch.Tensor], device: torch.device,
                 raw_pointers: bool = True, poison_seed: int = 0):
        self.plan, self.launches, self.device = plan, launches, device
        self.poison = torch.Generator().manual_seed(poison_seed)
        self.ops = {s["op"]: _resolve_op(s["op"]) for s in plan["steps"] if "op" in s}
        self.raw_pointers = raw_pointers
        self._ends: dict[int, int] = {}  # id of a tensor reference in ``plan`` -> the byte its view ends at
        self.fixed: dict[int, torch.UntypedStorage] = {}
        for tid, b in enumerate(plan["bases"]):
            if b["kind"] == "param":
                if b["key"] not in params:
                    raise PlanError(f"the plan reads parameter {b['key']!r}, which the reference model lacks")
                storage = torch.empty(b["nbytes"], dtype=torch.uint8, device=device).untyped_storage()
                view = self._view(storage, b)
                value = params[b["key"]]
                if tuple(view.shape) != tuple(value.shape):
                    raise PlanError(f"parameter {b['key']!r} has shape {tuple(value.shape)}, "
                                    f"the plan {tuple(view.shape)}")
                view.copy_(value)
                self.fixed[tid] = storage
            elif b["kind"] == "const":
                data = torch.frombuffer(bytearray(b["data"]), dtype=torch.uint8) if b["nbytes"] else \
                    torch.empty(0, dtype=torch.uint8)
                target = device if b["device"] == "cuda" else torch.device("cpu")
                self.fixed[tid] = data.to(target).untyped_storage()
        self.snapshot = {tid: torch.empty(0, dtype=torch.uint8, device=s.device).set_(s).clone()
                         for tid, s in self.fixed.items()}
        self.inputs = [(tid, b["index"], b["nbytes"]) for tid, b in enumerate(plan["bases"]) if b["kind"] == "input"]
        self.made = [tid for tid, b in enumerate(plan["bases"]) if b["kind"] == "op"]
        self.program = [(self.launches[s["launch"]], s["grid"], [self._compile_arg(a) for a in s["args"]], None)
                        if "launch" in s else (self.ops[s["op"]], None, None, s) for s in plan["steps"]
                        if not self._no_effect(s)]

    def _no_effect(self, step: dict) -> bool:
        """True for an op step that mutates nothing and whose outputs the plan never reads (a view
        or alias nothing uses): the runner skips it, so its host time is not the plan's."""
        return "op" in step and all(o is None for o in step["outs"]) and not self.ops[step["op"]]._schema.is_mutable

    def _compile_arg(self, a):
        """A launch argument as ``(kind, x, byte_offset)``: ``"v"`` a value passed as is, ``"p"`` a
        pointer into base ``x``, ``"r"`` a reference decoded per call (views, descriptors)."""
        if isinstance(a, dict) and "T" in a and self.raw_pointers:
            return ("p", a["T"], a["offset"] * DTYPES[a["dtype"]].itemsize)
        if isinstance(a, dict):
            return ("r", a, 0)
        return ("v", a, 0)

    def _view(self, storage, ref: dict) -> torch.Tensor:
        dtype = DTYPES[ref["dtype"]]
        size, stride, offset = ref["size"], ref["stride"], ref["offset"]
        end = self._ends.get(id(ref))
        if end is None:  # any view with elements, 0-dim too: ``set_`` grows a storage to fit
            end = (offset + sum((n - 1) * st for n, st in zip(size, stride)) + 1) * dtype.itemsize \
                if all(s > 0 for s in size) else 0
            end = self._ends[id(ref)] = -1 if min(stride, default=0) < 0 and end else end
        if end < 0:
            raise PlanError("a tensor reference has a negative stride")
        if end > storage.nbytes():
            raise PlanError(f"a tensor reference reaches byte {end} of a {storage.nbytes()}-byte storage")
        return torch.empty(0, dtype=dtype, device=storage.device).set_(storage, offset, size, stride)

    def _decode(self, v, bases: dict):
        if isinstance(v, list):
            return [self._decode(x, bases) for x in v]
        if not isinstance(v, dict):
            return v
        if "T" in v:
            if v["T"] not in bases:
                raise PlanError(f"base {v['T']} is used before it exists")
            return self._view(bases[v["T"]], v)
        (tag, x), = v.items()
        if tag == "tuple":
            return tuple(self._decode(y, bases) for y in x)
        if tag == "dtype":
            return DTYPES[x]
        if tag == "device":
            return self.device if x == "cuda" else torch.device("cpu")
        if tag == "memory_format":
            return MEMORY_FORMATS[x]
        if tag == "layout":
            return LAYOUTS[x]
        if tag == "tl":
            import triton.language as tl

            return getattr(tl, x)
        if tag == "desc" and self.device.type == "cpu":  # the interpreter takes Triton's own host descriptor
            from triton.tools.tensor_descriptor import TensorDescriptor

            return TensorDescriptor(self._decode(x["base"], bases), x["shape"], x["strides"], x["block_shape"],
                                    x["padding"])
        if tag == "desc":
            return Descriptor(self._decode(x["base"], bases), x["shape"], x["strides"], x["block_shape"], x["padding"])
        raise PlanError(f"unknown value tag {tag!r}")

    def __call__(self, *inputs) -> list[torch.Tensor]:
        bases = dict(self.fixed)
        for tid, index, nbytes in self.inputs:
            if index >= len(inputs) or not isinstance(inputs[index], torch.Tensor):
                raise PlanError(f"the plan reads input {index}, which is not a tensor")
            storage = inputs[index].untyped_storage()
            if storage.nbytes() != nbytes:
                raise PlanError(f"input {index} has {storage.nbytes()} bytes, the plan {nbytes}")
            bases[tid] = storage
        for fn, grid, args, step in self.program:
            if step is None:
                fn(grid, [x if kind == "v" else bases[x].data_ptr() + off if kind == "p" else self._decode(x, bases)
                          for kind, x, off in args])
                continue
            out = fn(*self._decode(step["args"], bases), **self._decode_kwargs(step["kwargs"], bases))
            leaves = tree_flatten(out)[0]
            if len(leaves) != len(step["outs"]):
                raise PlanError(f"{step['op']} returned {len(leaves)} values, the plan {len(step['outs'])}")
            for tid, leaf in zip(step["outs"], leaves):
                if tid is not None:
                    if not isinstance(leaf, torch.Tensor):
                        raise PlanError(f"{step['op']} returned a {type(leaf).__name__} where the plan has a tensor")
                    bases[tid] = leaf.untyped_storage()
        self._made = [bases[tid] for tid in self.made if tid in bases]
        return [self._decode(o, bases) for o in self.plan["outputs"]]

    def reset(self) -> None:
        """Restore parameters and constants and fill the storages the last call made with 0xFF
        (NaN for floats): called between timed iterations, outside the timed window."""
        for tid, s in self.fixed.items():
            torch.empty(0, dtype=torch.uint8, device=s.device).set_(s).copy_(self.snapshot[tid])
        for s in getattr(self, "_made", []):
            torch.empty(0, dtype=torch.uint8, device=s.device).set_(s).fill_(0xFF)
        self._made = []

    def poison_changed(self) -> list[int]:
        """Fill each constant whose bytes differ from the recorded ones with bytes drawn from the
        runner's ``poison_seed``, each in [0, 127] (so every integer the bytes hold is
        non-negative and, from 2 bytes wide, almost always large; every float finite): state a
        call left there cannot count calls. Constants a call left as it found them are kept.
        Returns the poisoned bases' ids."""
        poisoned = []
        for tid, s in self.fixed.items():
            now = torch.empty(0, dtype=torch.uint8, device=s.device).set_(s)
            if self.plan["bases"][tid]["kind"] != "const" or torch.equal(now, self.snapshot[tid]):
                continue
            noise = torch.randint(0, 128, (now.numel(),), dtype=torch.uint8, generator=self.poison)
            now.copy_(noise)
            poisoned.append(tid)
        return poisoned

    def _decode_kwargs(self, kwargs: dict, bases: dict) -> dict:
        return {k: self._decode(v, bases) for k, v in kwargs.items()}

    def changed_params(self) -> list[str]:
        """Parameters whose bytes differ from when the runner was built (constants may change:
        workspaces)."""
        out = []
        for tid, s in self.fixed.items():
            b = self.plan["bases"][tid]
            now = torch.empty(0, dtype=torch.uint8, device=s.device).set_(s)
            if b["kind"] == "param" and not torch.equal(now, self.snapshot[tid]):
                out.append(f"parameter {b['key']}")
        return out


def _host(outs: list) -> list:
    """Copies of ``outs`` on the host: an output a later call writes again (a buffer the forward
    keeps and returns) is judged as the call that returned it left it."""
    return [o.detach().to("cpu", copy=True) for o in outs]


class _Replay:
    """One replay job: the task, its kernels and a plan per shape."""

    def __init__(self, job: ReplayJob, folder: str):
        for d in job.get("task_dirs") or []:
            if d not in user_task_dirs():
                register_tasks_from(d)
        self.job = job
        self.spec = get_task(job["task"])
        self.task = task_module(self.spec)
        cuda = job["device"] == "cuda"
        self.device = torch.device("cuda", torch.cuda.current_device()) if cuda else torch.device("cpu")
        self.entries = from_job(job["plans"])
        self.launches = [loader(e["kernels"], cuda)(e["kernels"], folder_for(folder, i))
                         for i, e in enumerate(self.entries)]
        self.violations: list[list[str]] = []

    def violate(self, code: str, message: str) -> None:
        if [code, message] not in self.violations and len(self.violations) < MAX_VIOLATIONS:
            self.violations.append([code, message])

    def runner(self, shape: dict, distribution: str, seed: int, layout: dict | None = None,
               warm: bool = False) -> PlanRunner:
        """The plan of ``shape`` in ``layout`` on parameters drawn from ``seed``: a model's first
        forward, or with ``warm`` its second (``record_replay.recording_trials``)."""
        found = [i for i, e in enumerate(self.entries)
                 if e["shape"] == shape and e.get("layout") == layout and bool(e.get("warm")) == warm]
        if not found:
            raise PlanError(f"no {'second-forward ' if warm else ''}plan for shape {shape} in layout {layout}")
        entry, launches = self.entries[found[0]], self.launches[found[0]]
        init = self.task.get_init_inputs(**shape)
        torch.manual_seed(seed)
        ref = self.task.Model(*init)
        randomize_parameters(ref, distribution, seed, self.device.type)
        ref = ref.to(self.device)
        return PlanRunner(entry["plan"], launches, ref.state_dict(), self.device,
                          raw_pointers=self.device.type == "cuda", poison_seed=derived_seed(seed, "carried-state"))

    def call(self, runner: PlanRunner, inputs: list, first: bool = True) -> list:
        """One checked call with poisoned allocations: inputs and parameters unchanged. With
        ``first`` False the call finds the constants the earlier ones changed poisoned
        (``PlanRunner.poison_changed``); else it finds them as the earlier calls left them."""
        if not first:
            runner.poison_changed()
        before = [x.clone() if isinstance(x, torch.Tensor) else x for x in inputs]
        deterministic(True)
        try:
            outs = runner(*inputs)
            if self.device.type == "cuda":
                torch.cuda.synchronize()
        finally:
            deterministic(False)
        for i, (x, y) in enumerate(zip(before, inputs)):
            if isinstance(x, torch.Tensor) and not torch.equal(x, y):
                self.violate("input_mutated", f"forward changed input {i}")
        for what in runner.changed_params():
            self.violate("state_mutated", f"forward changed {what}")
        return outs

    def trial(self, t: dict) -> dict:
        shape, dist, seed = t["shape"], t["distribution"], t["seed"]
        runner = self.runner(shape, dist, seed, t.get("layout"), warm=bool(t.get("rerun")))
        inputs = make_inputs(self.task, shape, dist, seed, self.device.type, t.get("layout"))
        row = {"outputs": _host(self.call(runner, inputs)), "expected_dtypes": []}
        if t.get("rerun"):
            layout, device = t.get("layout"), self.device.type
            started, budget = time.monotonic(), trial_inputs.CARRIED_BUDGET_S
            for i in range(int(t.get("carried", 0))):  # state carried, outputs unchecked, within budget
                if time.monotonic() - started > budget:
                    break
                carried = trial_inputs.carried_seed(seed, i)
                self.call(runner, make_inputs(self.task, shape, dist, carried, device, layout))
            fresh = make_inputs(self.task, shape, dist, fresh_seed(seed), device, layout)
            row["fresh"] = {"outputs": _host(self.call(runner, fresh))}
            row["rerun"] = _host(self.call(runner, inputs, first=False))
        return row

    def protocol_trial(self, t: dict) -> dict:
        """``trial`` for another protocol's trial (KernelBench's): a raise fails that trial of the
        protocol, ``{"outputs": [], "error": ...}``, not the verdict (a device fault still ends
        the replay's later work, and so the verdict)."""
        try:
            return self.trial(t)
        except Exception as exc:  # noqa: BLE001 - the protocol's own failure, reported beside the verdict
            return {"outputs": [], "error": _short_traceback(exc)}

    def timing(self, plan: dict) -> dict:
        from hawkeye_env.judge.sandboxed.common.timing import sm_clock_mhz, time_callable

        shape = dict(self.spec.gpu_shapes[0])
        runner = self.runner(shape, "normal", plan["seed"])
        inputs = make_inputs(self.task, shape, "normal", plan["seed"], self.device.type)
        t = time_callable(runner, inputs, plan["iters"], plan["retries"], plan["seed"], keep=plan.get("keep", 2),
                          between=runner.reset)
        t["kept"] = [{"outputs": _host(out), "refills": refills}
                     for (_, out), refills in zip(t.pop("kept"), t.pop("kept_refills"))]
        t["sm_clock_mhz"] = sm_clock_mhz()
        kb = plan.get("kernelbench")
        if kb:  # KernelBench's protocol: its back-to-back timing on the file's own inputs
            runner = self.runner(dict(kb["shape"]), NATIVE, kb["seed"])
            inputs = make_inputs(self.task, dict(kb["shape"]), NATIVE, kb["seed"], self.device.type)
            t["kernelbench_ms"] = time_back_to_back(runner, inputs, int(kb["trials"]), between=runner.reset)
        return {"candidate": t}


def plan_runner(job: ReplayJob, folder: str, shape: dict, seed: int) -> tuple[PlanRunner, list]:
    """The runner of ``job``'s plan for ``shape`` and that shape's inputs drawn from ``seed`` (normal
    values): the forward a profile's Nsight Compute run calls (``nsight_target.py``)."""
    run = _Replay(job, folder)
    return run.runner(shape, "normal", seed), make_inputs(run.task, shape, "normal", seed, run.device.type)


def _short_traceback(exc: BaseException) -> str:
    lines = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)).strip().splitlines()
    return "\n".join(lines[-TRACEBACK_LINES:])


def run_replay(job: ReplayJob, report=lambda violations: None, lane=lambda mode: None) -> Reply:
    """The replay's reply to ``job`` (``{"kind": "replay", "task", "device", "trials", "timing",
    "plans", "task_dirs", "workdir"}``, optionally ``"instructions"``), in the worker's reply
    format; never raises. A plan that does not fit, or kernels that fail, give ``runtime_error``
    with the reason. A ``"profile"`` job is answered by ``profile_job.run_profile``."""
    if job.get("kind") == "profile":
        from hawkeye_env.judge.sandboxed.replay.profile_job import run_profile

        return run_profile(job, lane)
    reply: Reply = {"stage": "ok", "error": "", "violations": [], "trials": [], "timing": {}, "profile": {}}
    started = time.monotonic()
    if job["device"] == "cuda":
        import triton

        triton.set_allocator(lambda size, align, stream: torch.empty(size, dtype=torch.int8, device="cuda"))
    torch.set_grad_enabled(False)
    torch.utils.deterministic.fill_uninitialized_memory = True
    try:
        run = _Replay(job, job.get("workdir") or os.getcwd())
        reply["profile"]["load_s"] = time.monotonic() - started
        for t in job["trials"]:
            reply["trials"].append(run.protocol_trial(t) if t.get("protocol") else run.trial(t))
            if run.violations:
                break
        reply["profile"]["trials_s"] = time.monotonic() - started - reply["profile"]["load_s"]
        if job.get("timing") and not run.violations:
            lane("exclusive")
            timed = time.monotonic()
            reply["timing"] = run.timing(job["timing"])
            reply["profile"]["timing_s"] = time.monotonic() - timed
        lane("none")
        if job.get("instructions") and not run.violations:  # the kernels' machine code (a precision task)
            from hawkeye_env.judge.sandboxed.replay.profile_job import instruction_facts

            reply["instructions"] = instruction_facts(run.entries[0], job.get("workdir") or os.getcwd())
        reply["violations"] = run.violations
    except (PlanError, RebuildError) as exc:
        reply.update(stage="runtime_error", error=f"the launch plan does not replay: {exc}")
    except BaseException as exc:  # noqa: BLE001 - the candidate's kernels failing is its verdict
        reply.update(stage="runtime_error", **failure_fields(exc),
                     error=f"the candidate's kernels failed in the replay:\n{_short_traceback(exc)}")
    if reply["stage"] != "ok":
        reply.update(trials=[], timing={})
    return reply


def serve(conn, device: str, memory_limit_bytes: int, standby_lane: dict | None = None) -> None:
    """The replay process's entry point: ``worker_process.serve_jobs`` with ``run_replay``."""
    serve_jobs(conn, device, memory_limit_bytes, standby_lane, run_replay)


__all__ = ["PlanError", "PlanRunner", "plan_runner", "run_replay", "serve"]
