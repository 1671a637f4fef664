"""``hawkeye tasks generate`` and the rows of ``hawkeye tasks list``.

    hawkeye tasks generate --n 200 --seed 0 --out /tmp/tasks          # gated tasks + index + report.json
    HAWKEYE_TASK_DIRS=/tmp/tasks hawkeye tasks list --split train      # read from the index, nothing imported
    HAWKEYE_TASK_DIRS=/tmp/tasks hawkeye tasks show g0_00003_rmsnorm_weight_bf16

A row of a generated task comes from its folder's index (``tasks/task_dirs.py``), so listing ten
thousand of them imports none; a row of any other task from its spec.
"""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from hawkeye_env.tasks.registry import get_task, indexed_tasks, list_tasks, registered_ids
from hawkeye_env.tasks.selection import HELD_OUT, SPLITS, select_tasks, task_split


def task_rows(ids: list[str] | tuple[str, ...]) -> list[dict]:
    """One row per task: id, family, dtypes, split, GPU shape, GFLOP, MB moved, unit tags and the
    difficulty level (generated tasks; 0 for the others)."""
    index = indexed_tasks()
    rows = []
    for task_id in ids:
        entry = index.get(task_id)
        if entry is not None:
            rows.append({k: entry[k] for k in ("id", "family", "dtypes", "gpu_shape", "gflop", "mb", "tags")}
                        | {"split": entry.get("split", HELD_OUT), "level": entry["difficulty"]["level"]})
            continue
        spec = get_task(task_id)
        shape = dict(spec.gpu_shapes[0])
        rows.append({"id": spec.id, "family": spec.family, "dtypes": list(spec.dtypes), "gpu_shape": shape,
                     "gflop": spec.flops(**shape) / 1e9, "mb": spec.bytes_moved(**shape) / 1e6,
                     "tags": list(spec.tags), "split": task_split(task_id), "level": 0})
    return rows


def print_task_table(rows: list[dict], console: Console, title: str = "hawkeye tasks") -> None:
    table = Table(title=title)
    for col in ("id", "family", "dtypes", "GPU shape", "GFLOP", "MB moved", "units", "split"):
        table.add_column(col)
    for r in rows:
        shape = " ".join(f"{k}={v}" for k, v in r["gpu_shape"].items())
        table.add_row(r["id"], r["family"], ",".join(r["dtypes"]), shape, f"{r['gflop']:.2f}", f"{r['mb']:.1f}",
                      ", ".join(r["tags"]), r["split"])
    console.print(table)


def list_tasks_command(split: str | None, as_json: bool, console: Console) -> None:
    """``hawkeye tasks list [--split SPLIT] [--json]``: without a split, every task (``--json``: each
    spec's summary, which imports every task); with one, the split's rows, read from the indexes."""
    if split is None and as_json:
        typer.echo(json.dumps([s.summary() for s in list_tasks()], sort_keys=True))
        return
    if split is not None and split not in SPLITS:
        raise typer.BadParameter(f"--split must be one of {', '.join(SPLITS)}")
    rows = task_rows(select_tasks(f"split:{split}") if split else registered_ids())
    if as_json:
        typer.echo(json.dumps(rows, sort_keys=True))
        return
    print_task_table(rows, console, f"hawkeye tasks: {split} ({len(rows)})" if split else "hawkeye tasks")


#: ``--tasks`` and ``--split`` of the commands that take a task selection (eval, serve, baselines).
TASKS_HELP = "Task ids or splits (split:train; repeat or comma-separate). Default: all."
SPLIT_HELP = "Add a split's tasks (train, validation, test) to --tasks."


def selected_ids(tasks: list[str] | None, split: str | None) -> list[str]:
    """The ids ``--tasks`` (ids or ``split:NAME``, repeated or comma-separated) and ``--split`` name;
    [] when neither names any (every task). Exits 2 on an unknown id or split."""
    items = [t for item in tasks or [] for t in item.split(",") if t] + ([f"split:{split}"] if split else [])
    try:
        return list(select_tasks(items)) if items else []
    except (KeyError, ValueError) as exc:
        Console(stderr=True).print(f"[red]error:[/red] {escape(str(exc.args[0]))}")
        raise typer.Exit(2) from None


def tasks_generate(
    n: int = typer.Option(..., "--n", min=1, help="How many tasks to draft (the gates drop some)."),
    seed: int = typer.Option(0, help="The distribution's seed: the same seed writes the same tasks."),
    out: Path = typer.Option(..., "--out", help="Folder for the task folders, their index and report.json."),
    families: str | None = typer.Option(None, help="Comma-separated grammar families (default: all; see "
                                        "hawkeye_env/tasks/generate/families)."),
    backward_share: float = typer.Option(0.2, min=0.0, max=1.0, help="Share of drafts turned into their backward "
                                         "variant, where one exists."),
    compile_mode: str = typer.Option("capture", "--compile", help="Compile gate: none, capture (Dynamo and "
                                     "AOTAutograd, no code generation) or inductor."),
    compile_every: int = typer.Option(1, min=1, help="Run the compile gate on every N-th draft."),
    workers: int = typer.Option(1, min=1, help="Processes drafting and gating tasks."),
    as_json: bool = typer.Option(False, "--json", help="Print the whole report as JSON."),
) -> None:
    """Generate a gated task distribution; use it with HAWKEYE_TASK_DIRS=OUT (a folder or an archive of it)."""
    from hawkeye_env.task_gates.baselines import COMPILE_MODES
    from hawkeye_env.task_gates.pipeline import GenerateConfig, generate
    from hawkeye_env.tasks.generate.families import FAMILIES

    chosen = tuple(f for f in (families or "").split(",") if f) or None
    unknown = sorted(set(chosen or ()) - set(FAMILIES))
    if unknown:
        raise typer.BadParameter(f"unknown families {unknown}; known: {', '.join(FAMILIES)}")
    if compile_mode not in COMPILE_MODES:
        raise typer.BadParameter(f"--compile must be one of {', '.join(COMPILE_MODES)}")
    config = GenerateConfig(n=n, seed=seed, out=out.resolve(), families=chosen, backward_share=backward_share,
                            compile=compile_mode, compile_every=compile_every, workers=workers)
    report = generate(config)
    if as_json:
        typer.echo(json.dumps(report, sort_keys=True))
        return
    typer.echo(f"kept {report['kept']} of {n} drafts in {report['wall_s']:.1f} s -> {config.out}")
    typer.echo("dropped: " + (", ".join(f"{k} {v}" for k, v in report["dropped"].items()) or "none"))
    splits = report["splits"].items()
    typer.echo("splits: " + ", ".join(f"{k} {v['tasks']} tasks / {v['graphs']} graphs" for k, v in splits))
