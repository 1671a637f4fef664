"""What the GPU sweeps of ``bench.kerneldev.sweeps`` share: one JSON line per row (``print_row``),
the judge's timing of one call (``median_ms_and_cv``), the relative L2 check (``relative_error``),
the command line (``sweep_main``: ``--budget-s``, ``--only``, ``--rounds``, a clear exit without
CUDA, a ``provenance`` and an ``env`` row first and a ``done`` row last), the check-then-time loop of one shape
(``check_then_time``: the GEMM, small-M and chunked-scan sweeps; the attention sweep keeps its own,
with two vendor ratios and no deadline per configuration) and a unit's naive and solution kernels
against configurations (``sweep_unit``: the split-K sweep).

``run_shape(label, *shape, rounds=R, deadline=T)`` sweeps one shape; a shape not started by the
deadline (``start + --budget-s``) is a ``skipped`` row, and ``run_shape`` may use the deadline to
stop timing new configurations of its own shape.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable, Sequence

import torch

from bench.provenance import provenance
from hawkeye_env.judge.sandboxed.common.timing import time_callable
from units.lib.harness import resolve
from units.lib.index import get_unit

# Timed iterations per call and retries over the CV gate: shorter than a verdict's 50 x 3, enough
# for the interleaved rounds to show the spread.
ITERS, RETRIES = 30, 1


def print_row(**fields) -> None:
    """One JSON line on stdout, flushed (a sweep cut short keeps every row it printed)."""
    print(json.dumps(fields), flush=True)


def median_ms_and_cv(fn, inputs: list) -> tuple[float, float]:
    """``fn(*inputs)`` timed as the judge times a call (L2 flushed, inputs refilled every iteration)."""
    r = time_callable(fn, list(inputs), iters=ITERS, retries=RETRIES, seed=0, keep=0)
    return r["median_ms"], r["cv"]


def relative_error(x: torch.Tensor, y: torch.Tensor) -> float:
    """``|x - y| / |y|`` in float32 (relative L2)."""
    x, y = x.float(), y.float()
    return float((x - y).norm() / y.norm().clamp_min(1e-12))


def sweep_unit(unit_name: str, shape: dict, configs: Sequence[dict], call: Callable) -> None:
    """Time a unit's naive and solution kernels at ``shape``, then ``call(cfg, *inputs)`` for each
    configuration: one row each with ``ms``, ``cv``, ``tflops`` and (configurations) ``err``, the
    relative L2 difference from the naive kernel on the same inputs; a configuration that raises is
    an ``error`` row."""
    unit = get_unit(unit_name)
    inputs = resolve(unit.make_inputs)(shape, "cuda", 0)
    naive, solution = resolve(unit.naive), resolve(unit.solution)
    flops = unit.flops(**shape)
    for name, fn in (("naive", naive), ("solution", solution)):
        ms, cv = median_ms_and_cv(fn, inputs)
        print_row(unit=unit_name, shape=shape, cfg=name, ms=ms, cv=cv, tflops=flops / ms / 1e9)
    expected = naive(*inputs)
    for cfg in configs:
        def fn(*args, cfg=cfg):
            return call(cfg, *args)
        try:
            err = relative_error(fn(*inputs), expected)
            ms, cv = median_ms_and_cv(fn, inputs)
            print_row(unit=unit_name, shape=shape, cfg=cfg, ms=ms, cv=cv, tflops=flops / ms / 1e9, err=err)
        except Exception as exc:  # noqa: BLE001 - a configuration that does not compile is a row too
            print_row(unit=unit_name, shape=shape, cfg=cfg, error=str(exc)[:200])


def sweep_main(argv: list[str] | None, doc: str, what: str, configs: Sequence[dict], shapes: Sequence[tuple],
               run_shape: Callable[..., None], budget_s: float) -> int:
    """Parse the sweep's arguments and run ``run_shape`` over ``shapes`` (``(label, *shape)``)."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--budget-s", type=float, default=budget_s)
    parser.add_argument("--only", nargs="*", default=None, help="shape labels to run (default: all)")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    if not torch.cuda.is_available():
        print(f"error: the {what} sweep times kernels on a CUDA GPU; none is available", file=sys.stderr)
        return 2
    import triton

    print_row(kind="provenance", **provenance("cuda", None, argv))
    print_row(kind="env", device=torch.cuda.get_device_name(), torch=torch.__version__, triton=triton.__version__,
              configs=list(configs))
    start = time.monotonic()
    for label, *shape in shapes:
        if args.only and label not in args.only:
            continue
        if time.monotonic() - start > args.budget_s:
            print_row(kind="skipped", shape=label, why=f"budget of {args.budget_s:.0f} s spent")
            continue
        run_shape(label, *shape, rounds=args.rounds, deadline=start + args.budget_s)
    print_row(kind="done", seconds=time.monotonic() - start)
    return 0


def check_then_time(label: str, inputs: list, expected: torch.Tensor, fixed: dict[str, Callable],
                    configs: Sequence[dict], call: Callable, *, rounds: int, deadline: float, max_err: float,
                    rate: Callable[[float], dict], reference: str,
                    timer: Callable = median_ms_and_cv) -> dict[str, float]:
    """Check, then time interleaved, one shape's runners; returns each runner's median ms.

    Args:
        label: the shape's name in every row.
        inputs: the runners' arguments (refilled in place between timed calls by ``timer``).
        expected: float32 result every runner is compared with (relative L2).
        fixed: runners always timed, by name (vendor kernels, the expert); never dropped.
        configs: keyword dicts; ``call(cfg, *inputs)`` runs one. A configuration that raises or
            misses ``max_err`` is an ``error`` row and is not timed; none is checked after
            ``deadline`` (a ``skipped`` row).
        rounds: timing rounds, each over every runner in the same order; no round starts after
            ``deadline`` except the first.
        rate: extra fields of a ``time`` / ``summary`` row from a median in ms (say TB/s).
        reference: the ``fixed`` runner the ``vs_<reference>`` ratios divide by.
        timer: ``timer(fn, inputs) -> (ms, cv)``; the judge's CUDA timing by default.

    Rows: ``time`` per runner and round, ``summary`` per runner (``median_ms``, ``vs_<reference>``,
    ``err``), then ``best`` (the fastest configuration); ratios also ``vs_expert`` when ``fixed``
    has an ``expert``. Returns each timed runner's median ms (configurations by ``json.dumps(cfg)``).
    """
    runners = {name: fn for name, fn in fixed.items()}
    errors = {name: relative_error(fn(*inputs), expected) for name, fn in fixed.items()}
    for cfg in configs:
        if time.monotonic() > deadline:
            print_row(kind="skipped", shape=label, cfg=cfg)
            continue
        try:
            err = relative_error(call(cfg, *inputs), expected)
            if not err < max_err:
                raise ValueError(f"relative L2 {err:.3g} from the float32 result")
        except Exception as exc:  # noqa: BLE001 - a configuration that cannot run is reported
            print_row(kind="error", shape=label, cfg=cfg, error=f"{type(exc).__name__}: {exc}"[:400])
            continue
        name = json.dumps(cfg)
        runners[name], errors[name] = (lambda *xs, cfg=cfg: call(cfg, *xs)), err
    times: dict[str, list[float]] = {name: [] for name in runners}
    for r in range(rounds):
        if r and time.monotonic() > deadline:
            break
        for name, fn in runners.items():
            ms, cv = timer(fn, inputs)
            times[name].append(ms)
            print_row(kind="time", shape=label, cfg=cfg_of(name), round=r, ms=ms, cv=cv, **rate(ms))
    medians = {name: statistics.median(t) for name, t in times.items()}

    def ratios(name: str) -> dict[str, float]:
        over = [reference] + (["expert"] if "expert" in medians and reference != "expert" else [])
        return {f"vs_{base}": medians[base] / medians[name] for base in over}

    for name in runners:
        print_row(kind="summary", shape=label, cfg=cfg_of(name), median_ms=medians[name], **rate(medians[name]),
             **ratios(name), err=errors[name])
    swept = [name for name in medians if name not in fixed]
    if swept:
        best = min(swept, key=medians.get)
        print_row(kind="best", shape=label, cfg=json.loads(best), median_ms=medians[best], **ratios(best))
    return medians


def cfg_of(name: str):
    """A runner's ``cfg`` field: the configuration dict of a swept runner, else its name."""
    return json.loads(name) if name.startswith("{") else name


__all__ = ["cfg_of", "check_then_time", "median_ms_and_cv", "print_row", "relative_error", "sweep_main", "sweep_unit"]
