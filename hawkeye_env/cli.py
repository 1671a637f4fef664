"""The ``hawkeye`` command line: judge candidates and browse tasks.

    hawkeye check gemm_bf16                      # judge the task's expert solution (the default)
    hawkeye check gemm_bf16 cand.py --json       # judge a candidate file, print the verdict JSON
    hawkeye tasks list [--json]
    hawkeye tasks show gemm_bf16 [--json]

``hawkeye check`` exits 0 whenever a verdict was reached, whatever it says, and 2 on usage errors
(unknown task, unreadable file), so scripts can tell "judged" from "not judged".
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table

from hawkeye_env.tasks.registry import get_task, list_tasks, solution_source

app = typer.Typer(help="hawkeye-env: a trustworthy judge and RL environment for GPU kernels.",
                  no_args_is_help=True, add_completion=False)
tasks_app = typer.Typer(help="Browse the task suite.", no_args_is_help=True)
app.add_typer(tasks_app, name="tasks")
console = Console()


def _fail(message: str) -> None:
    Console(stderr=True).print(f"[red]error:[/red] {message}")
    raise typer.Exit(2)


def _read_candidate(task_id: str, candidate: str | None, reply: bool) -> str:
    if candidate is None:
        return solution_source(get_task(task_id))
    try:
        text = sys.stdin.read() if candidate == "-" else Path(candidate).read_text(encoding="utf-8")
    except OSError as exc:
        _fail(f"cannot read candidate {candidate}: {exc}")
    if reply:
        from hawkeye_env.edits import EditError, extract_source

        try:
            return extract_source(text)
        except EditError as exc:
            _fail(f"no candidate in the reply: {exc}")
    return text


@app.command()
def check(
    task: str = typer.Argument(..., help="Task id (see `hawkeye tasks list`)."),
    candidate: str | None = typer.Argument(
        None, help="Candidate .py file defining ModelNew, or '-' for stdin. "
        "Default: the task's expert solution."),
    device: str = typer.Option("auto", help="cpu (Triton interpreter, untimed), cuda, or auto."),
    as_json: bool = typer.Option(False, "--json", help="Print the verdict as one JSON object."),
    reply: bool = typer.Option(False, help="The file is an LLM reply: take its fenced code."),
    no_cache: bool = typer.Option(False, help="Judge again even if the store has this verdict."),
    store: Path | None = typer.Option(None, help="SQLite results store (default: user cache)."),
    timeout: float = typer.Option(300.0, help="Hard limit for the worker, in seconds."),
) -> None:
    """Judge one candidate kernel on one task and print its verdict."""
    from hawkeye_env.judge.evaluator import EvalConfig, Evaluator, resolve_device
    from hawkeye_env.judge.store import ResultStore

    try:
        get_task(task)
        device = resolve_device(device)
    except (KeyError, ValueError) as exc:
        _fail(str(exc.args[0]) if exc.args else str(exc))
    source = _read_candidate(task, candidate, reply)
    evaluator = Evaluator(ResultStore(store), EvalConfig(timeout_s=timeout))
    verdict = evaluator.evaluate(task, source, device, use_cache=not no_cache)
    if as_json:
        typer.echo(json.dumps(verdict.to_dict(), sort_keys=True))
        return
    style = "green" if verdict.correct else "red"
    console.print(f"[bold {style}]{verdict.stage.value}[/]  reward {verdict.reward:.3f}"
                  f"  ({verdict.wall_s:.1f} s{', cached' if verdict.cached else ''})")
    console.print(verdict.feedback, markup=False, highlight=False)


@tasks_app.command("list")
def tasks_list(as_json: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """List every registered task."""
    specs = list_tasks()
    if as_json:
        typer.echo(json.dumps([s.summary() for s in specs], sort_keys=True))
        return
    table = Table(title="hawkeye tasks")
    for col in ("id", "family", "dtypes", "GPU shape", "GFLOP", "MB moved", "units"):
        table.add_column(col)
    for s in specs:
        shape = s.gpu_shapes[0]
        table.add_row(
            s.id, s.family, ",".join(s.dtypes), " ".join(f"{k}={v}" for k, v in shape.items()),
            f"{s.flops(**shape) / 1e9:.2f}", f"{s.bytes_moved(**shape) / 1e6:.1f}", ", ".join(s.tags),
        )
    console.print(table)


@tasks_app.command("show")
def tasks_show(
    task: str = typer.Argument(..., help="Task id."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Show one task: description, shapes, tolerances, allowed ops and the reference source."""
    try:
        spec = get_task(task)
    except KeyError as exc:
        _fail(str(exc.args[0]))
    summary = spec.summary()
    if as_json:
        typer.echo(json.dumps(summary, sort_keys=True))
        return
    console.print(f"[bold]{spec.id}[/bold] ({spec.family})\n{spec.description}\n")
    for key in ("dtypes", "cpu_shapes", "gpu_shapes", "gpu_flops", "gpu_bytes", "tags", "distributions"):
        console.print(f"[cyan]{key}[/cyan]: {summary[key]}")
    console.print(f"[cyan]allowed torch ops[/cyan]: {', '.join(summary['allowed_ops'])}")
    for dtype, tol in summary["tolerances"].items():
        console.print(f"[cyan]tolerance {dtype}[/cyan]: rtol={tol['rtol']} atol={tol['atol']}*rms "
                      f"rel_l2={tol['rel_l2']} ({tol['source']})")
    import importlib.util

    origin = importlib.util.find_spec(spec.module).origin
    console.print("\n[bold]reference[/bold]")
    console.print(Path(origin).read_text(encoding="utf-8"), markup=False, highlight=False)
