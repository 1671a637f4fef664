"""``hawkeye throughput``: judge a batch of your own candidates and say where its time went.

    hawkeye throughput CANDIDATES... [--task TASK] [--device cpu|cuda] [--gpus N] [--workers N]
                       [--copies K] [--json] [--out FILE]

Each candidate is a file; its task is ``--task`` or, without it, the part of the file name before
``__`` (``gemm_bf16__tiled.py``), as in the honest-code corpus. A folder stands for its ``*.py``
files. ``--copies K`` judges each file K times (each copy a distinct source, so none is served from
another's verdict). The verdict cache is bypassed. Prints verdicts per minute (per GPU-minute on
CUDA), each stage's median seconds per verdict and share of the batch's stage time
(``evals/throughput.py`` says which profile keys make each stage), and on CUDA the GPU's busy
fraction.
"""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table


def _files(paths: list[Path]) -> list[Path]:
    out = []
    for p in paths:
        out += sorted(p.glob("*.py")) if p.is_dir() else [p]
    return out


def candidate_jobs(paths: list[Path], task: str | None, copies: int) -> list[tuple[str, str]]:
    """``(task, source)`` pairs for the candidate files under ``paths``, each ``copies`` times
    (copy ``i`` > 0 ends with a comment naming it, so its source differs); ``ValueError`` names a
    file whose task is neither given nor in its name, or an unknown task."""
    from hawkeye_env.tasks.registry import get_task

    jobs = []
    for f in _files(paths):
        name = task or (f.stem.split("__", 1)[0] if "__" in f.stem else None)
        if name is None:
            raise ValueError(f"{f}: no --task given and the file name has no '<task>__' prefix")
        get_task(name)  # KeyError for an unknown task
        source = f.read_text(encoding="utf-8")
        jobs += [(name, source if i == 0 else f"{source}\n# copy {i}\n") for i in range(copies)]
    if not jobs:
        raise ValueError("no candidate files found")
    return jobs


def _print(result: dict) -> None:
    console = Console()
    rate = result.get("verdicts_per_gpu_minute") or result["verdicts_per_minute"]
    unit = "per GPU-minute" if result["device"] == "cuda" else "per minute"
    console.print(f"{result['verdicts']} verdicts in {result['wall_s']:.1f} s on {result['device']}: "
                  f"{rate:.1f} verdicts {unit}; outcomes {result['stages_by_outcome']}")
    table = Table("stage", "median s / verdict", "share")
    for stage, row in result["stages"].items():
        table.add_row(stage, f"{row['median_s']:.2f}", f"{100 * row['share']:.0f}%")
    console.print(table)
    if result["device"] == "cuda":
        busy = result.get("gpu_busy")
        console.print(f"GPU busy: {'n/a' if busy is None else f'{100 * busy:.0f}%'} ({result['busy_source']})")


def throughput_command(
    candidates: list[Path] = typer.Argument(..., exists=True, help="Candidate files or folders of them."),
    task: str | None = typer.Option(None, help="Task of every candidate (default: the file name's prefix)."),
    device: str = typer.Option("auto", help="cpu, cuda or auto."),
    gpus: int | None = typer.Option(None, min=1, help="CUDA: how many visible GPUs (default: all)."),
    workers: int | None = typer.Option(None, min=1, help="Candidates in flight (default: the pool's)."),
    copies: int = typer.Option(1, min=1, help="Judge each file this many times."),
    store: Path | None = typer.Option(None, help="SQLite results store (baselines are kept there)."),
    as_json: bool = typer.Option(False, "--json", help="Print the figures as JSON."),
    out: Path | None = typer.Option(None, help="Also write the figures as JSON here."),
) -> None:
    """Judge a batch of candidates and report verdicts per (GPU-)minute and where the time went."""
    from evals.throughput import judge_batch
    from hawkeye_env.judge.parent.evaluator import Evaluator, resolve_device
    from hawkeye_env.judge.parent.store import ResultStore

    try:
        jobs = candidate_jobs(candidates, task, copies)
    except (ValueError, KeyError) as exc:
        Console(stderr=True).print(f"[red]error:[/red] {exc}")
        raise typer.Exit(2) from None
    device = resolve_device(device)
    import torch

    n_gpus = (gpus or torch.cuda.device_count()) if device == "cuda" else 0
    result = judge_batch(Evaluator(ResultStore(store) if store else ResultStore()), jobs, device, workers,
                         max(n_gpus, 1))
    if out is not None:
        out.write_text(json.dumps(result, indent=1))
    print(json.dumps(result, indent=1)) if as_json else _print(result)


__all__ = ["candidate_jobs", "throughput_command"]
