"""Check units on CPU (Triton interpreter) and measure their metric on CUDA, under the rules a
caller passes in.

``check_unit_cpu`` must run where ``TRITON_INTERPRET=1`` was set before Triton was imported;
``measure_unit_gpu`` needs CUDA. Neither imports the judge: the units sit below it in the layer
order, so the comparison rule, the timer and the interpreter's fixes arrive as a ``Checks``.
``hawkeye_env.units_verify`` binds the judge's (``compare`` with ``DEFAULT_TOLERANCES``,
``time_callable`` with ``hide_launch``), runs this module's ``main`` as its command line and starts
it in a fresh process::

    python -m hawkeye_env.units_verify --cpu [NAMES] [--json]   # solution, naive, reference vs float64
    python -m hawkeye_env.units_verify --gpu [NAMES] [--json]   # time solution and naive at the first GPU shape

A unit's timed metric is the kernels' device time, the host's launch time queued away behind a GPU
spin (the FP4 units spent longer enqueueing their two launches than running them).
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import io
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass

import torch

from units.lib.index import UNITS_DIR, get_unit, list_units, resolve
from units.lib.spec import Unit

ROLES = ("solution", "naive", "reference")
# Input draws per CPU shape: each is a whole interpreted run of the kernel, and the odd shapes (masked
# tails, several blocks) carry the coverage, so two draws per shape.
SEEDS = (0, 1)
TIMED_METRICS = {"achieved_tbps": "bytes_moved", "achieved_tflops": "flops"}
SUBPROCESS_TIMEOUT_S = 1800

_NCU_DRIVER = """
import sys, torch
from units.lib.index import get_unit, resolve
unit, fn = get_unit(sys.argv[1]), resolve(sys.argv[2])
inputs = resolve(unit.make_inputs)(unit.gpu_shapes[0], "cuda", 0)
fn(*inputs); torch.cuda.synchronize()
torch.cuda.profiler.start(); fn(*inputs); torch.cuda.synchronize(); torch.cuda.profiler.stop()
"""


@dataclass(frozen=True)
class Checks:
    """The rules a unit is held to, passed in by the caller (``hawkeye_env.units_verify.JUDGE_CHECKS``
    holds the judge's).

    Attributes:
        compare: ``compare(out, ref64, like, device)`` holds output ``out`` against its float64
            reference ``ref64`` at the tolerance of ``like`` (the dtype the reference returns at
            native precision), the float64 arithmetic on ``device``; returns ``{"ok", "reason",
            "max_err_ratio", "rel_l2"}``.
        time: ``time(fn, inputs)`` times ``fn(*inputs)`` on CUDA (``inputs`` a list of device
            tensors it may refill); returns ``{"median_ms", "cv"}`` with ``median_ms`` in ms.
        prepare_interpreter: ``prepare_interpreter()`` readies the Triton interpreter before a
            CPU check (once per check; it must be safe to call again).
    """

    compare: Callable[[torch.Tensor, torch.Tensor, torch.dtype, str], dict]
    time: Callable[[Callable, list], dict]
    prepare_interpreter: Callable[[], None]


@contextlib.contextmanager
def _deterministic(enabled: bool, fill: bool):
    """torch's deterministic-algorithms flag and poisoned allocations inside the block. The flag is
    set as ``torch.use_deterministic_algorithms`` sets it, without that function's import of
    ``torch._inductor.config`` (1.4 s of the harness process's 5.2 s, ``python -X importtime``;
    ``hawkeye_env.judge.sandboxed.common.serve_loop.deterministic`` does the same for the judge)."""
    saved = (torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled(),
             torch.utils.deterministic.fill_uninitialized_memory)
    torch._C._set_deterministic_algorithms(enabled, warn_only=False)
    torch.utils.deterministic.fill_uninitialized_memory = fill
    try:
        yield
    finally:
        torch._C._set_deterministic_algorithms(saved[0], warn_only=saved[1])
        torch.utils.deterministic.fill_uninitialized_memory = saved[2]


def poisoned_empty():
    """Inside the block ``torch.empty`` returns NaN-filled memory (integers: their maximum)."""
    return _deterministic(True, True)


def _as_tuple(out) -> tuple:
    return tuple(out) if isinstance(out, (tuple, list)) else (out,)


def _float64(args: tuple) -> tuple:
    return tuple(a.double() if isinstance(a, torch.Tensor) and a.is_floating_point() else a for a in args)


def _reference_outputs(unit: Unit, inputs: tuple) -> tuple[tuple, tuple]:
    """The reference at native precision (for the output dtypes) and in float64 (for the values),
    outside deterministic mode (cuBLAS refuses deterministic matmuls without a workspace config)."""
    reference = resolve(unit.reference)
    with _deterministic(False, False):
        return _as_tuple(reference(*inputs)), _as_tuple(reference(*_float64(inputs)))


def check_case(unit: Unit, role: str, shape, seed: int, checks: Checks, device: str = "cpu", fn=None) -> dict:
    """Run ``unit``'s ``role`` callable (or ``fn``) at one shape and seed; compare with the float64
    reference by ``checks.compare``.

    Returns ``{"role", "shape", "seed", "ok", "reason", "max_err_ratio", "rel_l2"}``; an exception
    or an input mutated in place fails the case with its reason.
    """
    case = {"role": role, "shape": dict(shape), "seed": seed, "ok": False, "reason": "",
            "max_err_ratio": float("inf"), "rel_l2": float("inf")}
    inputs = resolve(unit.make_inputs)(shape, device, seed)
    expected, ref64 = _reference_outputs(unit, inputs)
    before = [a.clone() if isinstance(a, torch.Tensor) else a for a in inputs]
    try:
        outs = _as_tuple((fn or resolve(getattr(unit, role)))(*inputs))
    except Exception as exc:  # a failing kernel is a failed case, reported with its error
        case["reason"] = f"{type(exc).__name__}: {exc}"
        return case
    if any(isinstance(a, torch.Tensor) and not torch.equal(a, b) for a, b in zip(inputs, before)):
        case["reason"] = "mutated its inputs"
        return case
    if len(outs) != len(expected):
        case["reason"] = f"{len(outs)} outputs, expected {len(expected)}"
        return case
    results = [checks.compare(o, r, e.dtype, device) for o, r, e in zip(outs, ref64, expected)]
    case.update(ok=all(r["ok"] for r in results), reason="; ".join(r["reason"] for r in results if r["reason"]),
                max_err_ratio=max(r["max_err_ratio"] for r in results), rel_l2=max(r["rel_l2"] for r in results))
    return case


def check_unit_cpu(unit: Unit, checks: Checks, candidate=None) -> dict:
    """Every CPU shape x ``SEEDS`` for solution, naive and reference (and ``candidate``), outputs
    NaN-poisoned. A role the CPU cannot run (a Gluon solution: ``Unit.cpu_skip``) is left out of
    ``results`` and listed in ``skipped`` with the reason.

    Returns ``{"unit": name, "ok": bool, "results": {role: [case, ...]}, "skipped": {role: reason}}``
    (cases as ``check_case``).
    """
    if os.environ.get("TRITON_INTERPRET") != "1":
        raise RuntimeError("check_unit_cpu needs TRITON_INTERPRET=1 set before triton is imported; "
                           "use hawkeye_env.units_verify.verify_cpu_in_subprocess")
    checks.prepare_interpreter()
    skipped = {role: why for role in ROLES if (why := unit.cpu_skip(role))}
    with poisoned_empty():
        fns = {role: None for role in ROLES if role not in skipped} | ({"candidate": candidate} if candidate else {})
        results = {role: [check_case(unit, role, shape, seed, checks, fn=fn)
                          for shape in unit.cpu_shapes for seed in SEEDS]
                   for role, fn in fns.items()}
    ok = all(c["ok"] for cases in results.values() for c in cases) and bool(unit.cpu_shapes)
    return {"unit": unit.name, "ok": ok, "results": results, "skipped": skipped}


def load_candidate(path: str, unit: Unit):
    """The candidate file's function with the same name as the unit's solution callable."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("hawkeye_unit_candidate", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    name = unit.solution.partition(":")[2]
    if not hasattr(module, name):
        raise AttributeError(f"{path} defines no {name}(...) (the unit's solution signature)")
    return getattr(module, name)


def _callable_path(fn) -> str | None:
    module, name = getattr(fn, "__module__", None), getattr(fn, "__qualname__", "")
    return f"{module}:{name}" if module and name.isidentifier() else None


def ncu_metric(unit: Unit, path: str, metric: str) -> tuple[float | None, str]:
    """One Nsight Compute counter over one call of ``path`` at the first GPU shape.

    Summed over the call's kernels for ``.sum`` counters, averaged otherwise. Returns
    ``(value, "")`` or ``(None, reason)``.
    """
    if shutil.which("ncu") is None:
        return None, "ncu is not on PATH"
    cmd = ["ncu", "--clock-control", "none", "--profile-from-start", "off", "--csv", "--metrics", metric,
           sys.executable, "-c", _NCU_DRIVER, unit.name, path]
    proc = subprocess.run(cmd, cwd=UNITS_DIR.parent, capture_output=True, text=True, timeout=SUBPROCESS_TIMEOUT_S)
    rows = [line for line in proc.stdout.splitlines() if line.startswith('"')]
    values = [float(r["Metric Value"].replace(",", "")) for r in csv.DictReader(io.StringIO("\n".join(rows)))
              if r.get("Metric Name") == metric]
    if proc.returncode != 0 or not values:
        return None, f"ncu exited {proc.returncode} with no {metric} rows: {proc.stderr[-500:]}"
    return (sum(values) if metric.endswith(".sum") else sum(values) / len(values)), ""


def measure_unit_gpu(unit: Unit, checks: Checks, candidate=None) -> dict:
    """Time solution, naive (and ``candidate``) at ``unit.gpu_shapes[0]`` by ``checks.time`` and
    apply the pass rule; correctness by ``checks.compare``.

    Returns ``{"unit", "shape", "metric", "metric_unit", "values", "median_ms", "cv", "correct",
    "unavailable", "margin", "min_margin", "solution_beats_naive", "candidate_passes"}``; ``values``
    maps each role to the metric (``None`` where unavailable, with the reason in ``unavailable``).
    """
    if not torch.cuda.is_available():
        raise RuntimeError("measure_unit_gpu needs CUDA")
    metric, shape = unit.metric, unit.gpu_shapes[0]
    fns = {"solution": resolve(unit.solution), "naive": resolve(unit.naive)}
    if candidate is not None:
        fns["candidate"] = candidate
    report = {"unit": unit.name, "shape": dict(shape), "metric": metric.name, "metric_unit": metric.unit,
              "values": {}, "median_ms": {}, "cv": {}, "correct": {}, "unavailable": {},
              "min_margin": metric.min_margin}
    make = resolve(unit.make_inputs)
    for role, fn in fns.items():
        inputs = make(shape, "cuda", 0)
        expected, ref64 = _reference_outputs(unit, inputs)
        outs = _as_tuple(fn(*inputs))
        report["correct"][role] = len(outs) == len(expected) and all(
            checks.compare(o, r, e.dtype, "cuda")["ok"] for o, r, e in zip(outs, ref64, expected))
        del expected, ref64, outs
        timing = checks.time(fn, list(inputs))
        report["median_ms"][role], report["cv"][role] = timing["median_ms"], timing["cv"]
        if metric.name in TIMED_METRICS:
            count = getattr(unit, TIMED_METRICS[metric.name])(**shape)
            report["values"][role] = count / (timing["median_ms"] * 1e-3) / 1e12
        else:
            path = getattr(unit, role) if role != "candidate" else _callable_path(fn)
            value, why = ncu_metric(unit, path, metric.name) if path else (None, "candidate is not importable")
            report["values"][role] = value
            if why:
                report["unavailable"][role] = why
    sol, naive, cand = (report["values"].get(r) for r in ("solution", "naive", "candidate"))
    have = sol is not None and naive is not None and sol > 0 and naive > 0
    report["margin"] = (sol / naive if metric.higher_is_better else naive / sol) if have else None
    report["solution_beats_naive"] = metric.beats(sol, naive) if have else None
    report["candidate_passes"] = metric.passes(cand, sol) if cand is not None and sol is not None else None
    return report


def _print_cpu(report: dict) -> None:
    for role, cases in report["results"].items():
        bad = [c for c in cases if not c["ok"]]
        worst = max((c["max_err_ratio"] for c in cases), default=0.0)
        line = f"{report['unit']:<20} {role:<10} {len(cases) - len(bad)}/{len(cases)} ok  worst err ratio {worst:.3g}"
        print(line + "".join(f"\n    {c['shape']} seed {c['seed']}: {c['reason']}" for c in bad))
    for role, why in report.get("skipped", {}).items():
        print(f"{report['unit']:<20} {role:<10} skipped: {why}")


def _print_gpu(r: dict) -> None:
    vals = "  ".join(f"{k} {v:.3f}" if v is not None else f"{k} n/a" for k, v in r["values"].items())
    print(f"{r['unit']:<20} {r['metric']} ({r['metric_unit']}) at {r['shape']}: {vals}  margin "
          f"{r['margin'] if r['margin'] is None else round(r['margin'], 3)} (need {r['min_margin']})  "
          f"beats {r['solution_beats_naive']}  correct {r['correct']}"
          + (f"  unavailable {r['unavailable']}" if r["unavailable"] else ""))


def main(argv: list[str] | None, checks: Checks, prog: str) -> int:
    """The command line ``prog`` (``hawkeye_env.units_verify``'s): check or measure the named units
    under ``checks``; prints the reports and returns 0 when every unit passed."""
    parser = argparse.ArgumentParser(prog=prog, description=__doc__.splitlines()[0])
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--cpu", action="store_true", help="check under the Triton interpreter")
    mode.add_argument("--gpu", action="store_true", help="measure the metric on CUDA")
    parser.add_argument("names", nargs="*", help="unit names (default: every runnable unit)")
    parser.add_argument("--json", action="store_true", help="print one JSON list")
    parser.add_argument("--candidate", help="file defining a function named like the unit's solution")
    args = parser.parse_args(argv)
    units = [get_unit(n) for n in args.names] if args.names else list_units(include_on_paper=False)
    if args.cpu and "triton" not in sys.modules:
        os.environ["TRITON_INTERPRET"] = "1"
    reports = []
    for u in units:
        cand = load_candidate(args.candidate, u) if args.candidate else None
        reports.append(check_unit_cpu(u, checks, cand) if args.cpu else measure_unit_gpu(u, checks, cand))
    if args.json:
        print(json.dumps(reports))
    else:
        for report in reports:
            (_print_cpu if args.cpu else _print_gpu)(report)
    good = [r["ok"] if args.cpu else r["solution_beats_naive"] and all(r["correct"].values()) for r in reports]
    return 0 if all(good) else 1
