"""The baseline-only worker: times the judge's baselines and the task's vendor libraries, with no
candidate code in its process (sandboxed like every worker; started by the parent's
``baselines.measure_missing`` through ``BASELINE_TARGET``).

Two kinds of baseline share one timing path (``time_baselines``, built on ``timing.time_callable``):

* judge baselines (``JUDGE_BASELINES``): the reference ``Model`` run eagerly and under
  ``torch.compile``. The reward is computed against these only.
* vendor baselines (``TaskSpec.vendor_baselines``, name -> ``"module:function"``): trusted library
  code such as cuBLAS through ``torch.matmul``, one SDPA back-end, or an FLA kernel, called as
  ``fn(model, *inputs)``. They are reported (times, speedups), never scored. One that raises
  ``BaselineUnavailable`` or anything else is reported as unavailable with the reason, so a broken
  baseline never turns a candidate's verdict into an error.
"""

from __future__ import annotations

import functools
import importlib
import io
import os
import statistics
import traceback
from collections.abc import Callable, Iterable

import torch

from hawkeye_env.judge.shared.baseline_names import JUDGE_BASELINES, KERNELBENCH_EAGER, short_reason
from hawkeye_env.tasks.spec import BaselineUnavailable, TaskSpec


def resolve_vendor(target: str) -> Callable:
    """The function named by ``"package.module:function"`` (``function`` may be dotted)."""
    module_name, sep, attr = target.partition(":")
    if not sep or not module_name or not attr:
        raise ValueError(f"vendor baseline {target!r} is not of the form 'module:function'")
    return functools.reduce(getattr, attr.split("."), importlib.import_module(module_name))


def _synchronize(inputs: list) -> None:
    if any(isinstance(x, torch.Tensor) and x.is_cuda for x in inputs):
        torch.cuda.synchronize()


def prepare_vendor(target: str, model: torch.nn.Module, inputs: list) -> tuple[Callable | None, str]:
    """Import ``target`` and call it once as ``fn(model, *inputs)``.

    Returns ``(callable, "")`` where the callable takes ``*inputs``, or ``(None, reason)`` when the
    import or the first call raised: ``BaselineUnavailable`` gives its message, any other exception
    its type and message.
    """
    try:
        fn = resolve_vendor(target)
        fn(model, *inputs)
        _synchronize(inputs)
    except BaselineUnavailable as exc:
        return None, short_reason(str(exc) or "unavailable")
    except Exception as exc:  # noqa: BLE001 - a broken vendor baseline is reported, never fatal
        return None, short_reason(f"{type(exc).__name__}: {exc}")
    return functools.partial(fn, model), ""


def build(spec: TaskSpec, name: str, model: torch.nn.Module, inputs: list) -> tuple[Callable | None, str]:
    """The callable timed for baseline ``name`` (taking ``*inputs``), or ``(None, reason)``."""
    if name in ("eager", KERNELBENCH_EAGER):
        return model, ""
    if name == "compile":
        return torch.compile(model), ""
    if name not in spec.vendor_baselines:
        return None, f"task {spec.id} declares no baseline {name!r}"
    return prepare_vendor(spec.vendor_baselines[name], model, inputs)


def compiled_ahead(model: torch.nn.Module, inputs: list, names: Iterable[str]) -> dict[str, Callable]:
    """``{"compile": torch.compile(model)}`` already called once on ``inputs`` when ``names`` asks
    for it, else ``{}``; for ``time_baselines(..., built=...)``.

    The baseline-only worker compiles here under the GPU's shared lock, before it asks for the
    exclusive one: inductor's compile is host work, much of a task's first baseline job, which
    every other worker of the GPU would otherwise wait out before it times (BENCHMARKS.md,
    "Task suite against the vendors"). Its warm-up
    calls inside ``time_callable`` still come after, under the exclusive lock. Vendor baselines are
    not built here: FLA autotunes by timing, which must not share the GPU. A compile that raises is
    left out, so ``time_baselines`` builds it again and reports the failure as usual.
    """
    if "compile" not in names:
        return {}
    try:
        fn = torch.compile(model)
        fn(*inputs)
        _synchronize(inputs)
    except Exception:  # noqa: BLE001 - time_baselines rebuilds it and reports the error
        return {}
    return {"compile": fn}


def time_baselines(
    spec: TaskSpec, model: torch.nn.Module, inputs: list, plan: dict, judge_errors_raise: bool = True,
    built: dict[str, Callable] | None = None,
) -> dict[str, dict]:
    """Time every name in ``plan["baselines"]`` with ``plan``'s iters, retries and seed
    (``KERNELBENCH_EAGER`` by KernelBench's method, ``plan["kernelbench_trials"]`` calls). A name in
    ``built`` is timed as that callable (``compiled_ahead``) instead of being built here.

    Returns name -> ``time_callable``'s result without ``kept`` (``median_ms``, ``iqr_ms``, ``cv``,
    ``attempts``, ``wall_median_ms``, ``event_ms``, ``wall_ms``), or name -> ``{"unavailable":
    reason}``. A judge baseline that raises propagates when ``judge_errors_raise``; otherwise it is
    reported as unavailable too.
    """
    from hawkeye_env.judge.sandboxed.common.timing import time_callable

    result: dict[str, dict] = {}
    for name in plan["baselines"]:
        try:
            fn, reason = (built[name], "") if built and name in built else build(spec, name, model, inputs)
            if fn is not None and name == KERNELBENCH_EAGER:
                result[name] = back_to_back_entry(fn, inputs, int(plan["kernelbench_trials"]))
                continue
            if fn is not None:
                timed = time_callable(fn, inputs, plan["iters"], plan["retries"], plan["seed"])
                timed.pop("kept")
                timed.pop("kept_refills", None)
                result[name] = timed
                continue
        except Exception as exc:  # noqa: BLE001 - see the docstring
            if judge_errors_raise and name in JUDGE_BASELINES:
                raise
            reason = short_reason(f"raised while timed: {type(exc).__name__}: {exc}")
        result[name] = {"unavailable": reason}
    return result


def back_to_back_entry(fn, inputs: list, trials: int) -> dict:
    """``KERNELBENCH_EAGER``'s entry: the mean of ``trials`` back-to-back calls
    (``back_to_back.time_back_to_back``) as ``median_ms``, the field the store keeps."""
    from hawkeye_env.judge.sandboxed.common.back_to_back import time_back_to_back

    times = time_back_to_back(fn, inputs, trials)
    return {"median_ms": statistics.fmean(times), "method": "back_to_back_mean", "attempts": len(times)}


def reference_and_inputs(spec: TaskSpec, shape: dict, seed: int, device: str) -> tuple[torch.nn.Module, list]:
    """The reference ``Model`` and ``normal`` inputs at ``shape``, drawn exactly as the worker's
    timing draws them for a candidate (same seeds, same parameter redraw)."""
    from hawkeye_env.judge.shared.inputs import make_inputs, randomize_parameters
    from hawkeye_env.tasks.registry import task_module

    module = task_module(spec)
    init = module.get_init_inputs(**shape)
    torch.manual_seed(seed)
    ref = module.Model(*init)
    randomize_parameters(ref, "normal", seed, device)
    return ref.to(device), make_inputs(module, shape, "normal", seed, device)


def run_baseline_job(job: dict, lane=lambda mode: None) -> dict:
    """Trusted, candidate-free job: ``{"task", "device", "shape", "timing": plan}`` -> name -> entry.
    ``lane(mode)`` is the worker's lock request (``worker._take_gpu``): the inputs are drawn under
    the shared lock and ``torch.compile`` run once under it (``compiled_ahead``), the baselines
    timed under the exclusive one."""
    from hawkeye_env.tasks.registry import get_task

    spec = get_task(job["task"])
    ref, inputs = reference_and_inputs(spec, job["shape"], job["timing"]["seed"], job["device"])
    built = compiled_ahead(ref, inputs, job["timing"]["baselines"])
    lane("exclusive")
    try:
        return time_baselines(spec, ref, inputs, job["timing"], judge_errors_raise=False, built=built)
    finally:
        lane("none")


def serve_baselines(conn, device: str, memory_limit_bytes: int) -> None:
    """Process entry point (``run_job``'s protocol): read one baseline job as JSON bytes, take its
    lane (GPU pinning, caches, the timing lock through the parent) like a candidate's worker, send
    ``{"kind": "final", "baselines": ..., "error": ...}`` as ``torch.save`` bytes."""
    import json

    from hawkeye_env.judge.sandboxed.common.serve_loop import enter_lane

    torch.set_grad_enabled(False)
    job = json.loads(conn.recv_bytes().decode("utf-8"))
    reply: dict = {"kind": "final", "baselines": {}, "error": ""}
    try:
        lane, _ = enter_lane(conn, device, memory_limit_bytes, job.get("lane") or {})
        reply["baselines"] = run_baseline_job(job, lane)
    except Exception:  # noqa: BLE001 - reported to the parent as text
        reply["error"] = traceback.format_exc(limit=8)
    buf = io.BytesIO()
    torch.save(reply, buf)
    conn.send_bytes(buf.getvalue())
    conn.close()
    os._exit(0)  # no interpreter teardown: torch.compile's worker pools can delay a normal exit
