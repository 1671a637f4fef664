"""``hawkeye baselines``: measure (or read from the store) every task's baselines on this GPU.

    hawkeye baselines                                   # every task, device auto
    hawkeye baselines --tasks gemm_bf16,attention_causal_bf16 --device cuda --json
    hawkeye baselines --split train --device cuda        # a split (hawkeye_env/tasks/selection.py)
    hawkeye baselines --refresh                         # measure again, replacing stored figures

Each task's baselines (``eager``, ``compile`` and the task's ``vendor_baselines``) are timed at its
timed GPU shape in a fresh worker process, by the judge's own code (``judge.baselines``) with the
judge's iterations and retries, and cached in the results store under task, shape, device and
software versions — the entries the judge reads, so a measured baseline is not timed again by the
first verdict. A vendor baseline that cannot run is listed with its reason. Without a CUDA GPU the
command lists the baselines each task declares and exits 0.
"""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table

from hawkeye_env.cli_tasks import SPLIT_HELP, TASKS_HELP, selected_ids
from hawkeye_env.judge.parent import baselines
from hawkeye_env.judge.parent.evaluator import EvalConfig, resolve_device, software_versions
from hawkeye_env.judge.parent.lanes import default_lane
from hawkeye_env.tasks.registry import get_task, list_tasks
from hawkeye_env.tasks.spec import TaskSpec

# Host memory cap of a baseline worker: the judge's CUDA default (EvalConfig.memory_limit_gb).
MEMORY_LIMIT_BYTES = 48 * 2**30
# Input seed of baseline-only jobs; times do not depend on values, a fixed seed makes runs repeatable.
SEED = 0
NEEDS_GPU = "baselines need a CUDA GPU to be timed; none is available here, so only the declared ones are listed"


def measure_task(spec: TaskSpec, device: str, store, config: EvalConfig, refresh: bool) -> dict:
    """Baselines of ``spec`` at its timed shape: from the store, else measured in a worker.

    Returns ``{"shape", "declared", "error", "baselines": name -> entry}`` where an entry is
    ``{"median_ms", "tflops", "gbps", "cached", ...}`` or ``{"unavailable": reason, "cached"}``.
    ``error`` is set when the worker failed; its baselines are then absent and nothing is stored.
    """
    shape = dict(spec.gpu_shapes[0])
    versions = software_versions(device, spec)
    names = baselines.planned(spec, config.baselines, config.vendor_baselines)
    entries = {} if refresh else baselines.cached_entries(store, spec.id, shape, device, versions, names)
    entries = {n: {**e, "cached": True} for n, e in entries.items()}
    missing = [n for n in names if n not in entries]
    error = ""
    if missing:
        timing = {"seed": SEED, "iters": config.iters, "retries": config.retries}
        measured, error = baselines.measure_missing(store, spec, shape, device, versions, missing, timing,
                                                    config.timeout_s, MEMORY_LIMIT_BYTES, default_lane(device))
        entries.update({n: {**e, "cached": False} for n, e in measured.items()})
    flops, nbytes = spec.flops(**shape), spec.bytes_moved(**shape)
    out = {}
    for name in names:
        if name not in entries:
            continue
        e = entries[name]
        if "unavailable" in e:
            out[name] = {"unavailable": e["unavailable"], "cached": e["cached"]}
            continue
        seconds = e["median_ms"] * 1e-3
        out[name] = {k: e[k] for k in ("median_ms", "iqr_ms", "cv", "attempts", "cached") if k in e}
        out[name].update(tflops=flops / seconds / 1e12, gbps=nbytes / seconds / 1e9)
    return {"shape": shape, "declared": names, "error": error, "baselines": out}


def _declared(spec: TaskSpec, config: EvalConfig) -> dict:
    return {"declared": baselines.planned(spec, config.baselines, True),
            "vendor_baselines": dict(spec.vendor_baselines)}


def _table(device_name: str, rows: dict[str, dict]) -> Table:
    table = Table(title=f"hawkeye baselines on {device_name}")
    for col in ("task", "shape", "baseline", "median ms", "TFLOP/s", "GB/s", "note"):
        table.add_column(col, no_wrap=col in ("task", "baseline"))
    for task, row in rows.items():
        shape = " ".join(f"{k}={v}" for k, v in row["shape"].items())
        if row["error"]:
            table.add_row(task, shape, "-", "-", "-", "-", f"[red]worker failed:[/red] {row['error'][-300:]}")
        for name, e in row["baselines"].items():
            if "unavailable" in e:
                table.add_row(task, shape, name, "-", "-", "-", f"unavailable: {e['unavailable']}")
            else:
                table.add_row(task, shape, name, f"{e['median_ms']:.4f}", f"{e['tflops']:.1f}",
                              f"{e['gbps']:.0f}", "stored" if e["cached"] else "measured")
    return table


def baselines_command(
    tasks: list[str] | None = typer.Option(None, help=TASKS_HELP),
    split: str | None = typer.Option(None, help=SPLIT_HELP),
    device: str = typer.Option("auto", help="cuda, or auto (cpu only lists the declared baselines)."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
    refresh: bool = typer.Option(False, "--refresh", help="Measure again even if the store has figures."),
    store: Path | None = typer.Option(None, help="SQLite results store (default: user cache)."),
    timeout: float = typer.Option(600.0, help="Hard limit per task's baseline worker, in seconds."),
) -> None:
    """Measure every task's baselines (eager, torch.compile, vendor libraries) on the GPU."""
    from hawkeye_env.judge.parent.store import ResultStore

    errors = Console(stderr=True)
    specs = [get_task(t) for t in selected_ids(tasks, split)] or list_tasks()  # exits 2 on an unknown id or split
    if device not in ("auto", "cpu", "cuda"):
        errors.print(f"[red]error:[/red] device must be cpu, cuda or auto, not {device!r}")
        raise typer.Exit(2)
    try:
        device = resolve_device(device)
    except ValueError:
        device = "cpu"
    config = EvalConfig(timeout_s=timeout)
    if device != "cuda":
        declared = {s.id: _declared(s, config) for s in specs}
        if as_json:
            typer.echo(json.dumps({"device": device, "note": NEEDS_GPU, "tasks": declared}, sort_keys=True))
            return
        Console().print(f"[yellow]note:[/yellow] {NEEDS_GPU}.")
        table = Table(title="declared baselines")
        table.add_column("task", no_wrap=True, min_width=max(len(t) for t in declared))
        table.add_column("baselines")
        table.add_column("vendor functions", overflow="fold")
        for task, d in declared.items():
            table.add_row(task, ", ".join(d["declared"]),
                          "\n".join(f"{n}: {t}" for n, t in d["vendor_baselines"].items()) or "-")
        Console().print(table)
        return
    rows: dict[str, dict] = {}
    with ResultStore(store) as results:
        for spec in specs:
            errors.print(f"baselines of {spec.id} ...")
            rows[spec.id] = measure_task(spec, device, results, config, refresh)
    versions = software_versions(device)
    if as_json:
        typer.echo(json.dumps({"device": device, "gpu": versions["gpu"], "versions": versions, "tasks": rows},
                              sort_keys=True))
        return
    Console().print(_table(versions["gpu"], rows))
