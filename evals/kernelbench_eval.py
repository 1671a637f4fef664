"""Score a folder of KernelBench solutions as KernelBench reports them, next to hawkeye's verdicts.

    hawkeye tasks import-kernelbench KernelBench/KernelBench/level1 --out kb_tasks
    hawkeye kernelbench eval --level 1 --solutions runs/my_run --tasks-dir kb_tasks \\
        --baseline KernelBench/results/timing/H100_Modal/baseline_time_torch.json
    python -m evals.kernelbench_eval --level 1 --solutions runs/my_run --tasks-dir kb_tasks

Sample 0 of every problem of the level (``policies/folder.py`` reads the layout KernelBench's
generation scripts write) is judged by the one ``Evaluator`` with ``protocol="kernelbench"``, so
each verdict carries two answers: our stricter one (float64 reference, three input
distributions, reward-hack checks, the median of the timed trials), and KernelBench's protocol
run by the same judge (``hawkeye_env/judge/parent/decide/kernelbench_protocol.py``: five correctness trials on
the file's ``get_inputs`` and default initialisation, ``torch.allclose`` at ``--tolerance``
against the reference in its own precision, the mean of the timed trials). The table has a
column for each. A problem the importer refused, or without a solution file, counts as
incorrect in both, as KernelBench counts a missing sample. Each column's speedups are over a
baseline timed the way its candidate times are: ours over our eager baseline (device time); the
KernelBench columns over the ``--baseline`` JSON's mean eager times (``evals/kernelbench_fastp.py``),
so the figures compare with KernelBench's published tables measured on the same GPU, or without
one over the reference timed by KernelBench's method in this run (``baseline_mean_ms`` of the
protocol's entry). With ``--kernelbench-results`` (a ``runs/<run>/eval_results.json`` that KernelBench's
``scripts/eval_from_generations.py`` wrote for the same solutions) the table also has
KernelBench's own verdicts and times, from its own harness.

The report (``--out``, default ``out/kernelbench/level<L>``) holds ``report.md`` (the fast_p
table, then one row per problem) and ``results.json``.
"""

from __future__ import annotations

import json
from pathlib import Path

import typer

from evals.kernelbench_fastp import read_baseline, read_kernelbench_results, render_table, scores
from policies.folder import solution_path

BASELINE_OURS = "our eager baseline (device time, as the candidate's)"
BASELINE_KERNELBENCH_METHOD = ("the reference timed by KernelBench's method (the mean of 100 back-to-back "
                               "calls, the launch inside)")

kernelbench_app = typer.Typer(help="KernelBench: fast_p of a solutions folder beside hawkeye's verdicts.",
                              no_args_is_help=True)


def level_problems(tasks_dir: Path, level: int) -> list[dict]:
    """The level's problems from the import report in ``tasks_dir``: ``problem`` (file name),
    ``number``, ``task`` (id, or None when refused) and ``refused`` (the reason, or "")."""
    from hawkeye_env.kernelbench.importer import REPORT_FILE

    path = tasks_dir / REPORT_FILE
    if not path.is_file():
        raise FileNotFoundError(f"no {REPORT_FILE} in {tasks_dir}: run `hawkeye tasks import-kernelbench` first")
    report = json.loads(path.read_text(encoding="utf-8"))
    rows = [{"problem": t["problem"], "task": t["id"], "refused": ""} for t in report["imported"]
            if t["level"] == f"level{level}"]
    rows += [{"problem": s["problem"], "task": None, "refused": s["reason"]} for s in report["skipped"]
             if s["level"] == f"level{level}"]
    for r in rows:
        r["number"] = int(r["problem"].split("_")[0])
    return sorted(rows, key=lambda r: r["number"])


def judge_level(tasks_dir: Path, level: int, solutions: Path, device: str = "auto", baseline: Path | None = None,
                kernelbench_results: Path | None = None, workers: int | None = None,
                store: Path | None = None, tolerance: float | None = None) -> dict:
    """Judge sample 0 of every problem of ``level`` (module docstring); returns ``rows`` (one per
    problem) and ``columns`` (``scores`` per verdict source). ``tolerance`` is the KernelBench
    protocol's ``atol`` and ``rtol`` (default ``kernelbench_protocol.ATOL``, its v0.1 value)."""
    from hawkeye_env.judge.parent.decide import kernelbench_protocol
    from hawkeye_env.judge.parent.evaluator import EvalConfig, Evaluator, evaluate_many, resolve_device
    from hawkeye_env.judge.parent.store import ResultStore
    from hawkeye_env.tasks.registry import register_tasks_from

    register_tasks_from(tasks_dir)
    device = resolve_device(device)
    rows = level_problems(tasks_dir, level)
    base = read_baseline(baseline, level) if baseline else None
    if base is not None:
        rows = [r for r in rows if r["problem"] in base]
    jobs, judged = [], []
    for r in rows:
        path = solution_path(solutions, level, r["number"], 0)
        r["solution"] = str(path) if path.is_file() else ""
        if r["task"] and r["solution"]:
            jobs.append((r["task"], path.read_text(encoding="utf-8")))
            judged.append(r)
    tol = kernelbench_protocol.ATOL if tolerance is None else float(tolerance)
    config = EvalConfig(protocol=kernelbench_protocol.PROTOCOL, kernelbench_atol=tol, kernelbench_rtol=tol)
    verdicts = evaluate_many(Evaluator(ResultStore(store), config), jobs, device, workers=workers)
    for r in rows:
        r.update(stage="refused" if r["refused"] else "no_solution", correct=False, runtime_ms=None, eager_ms=None)
        r["kernelbench"] = {"correct": False, "mean_ms": None, "reason": r["stage"]}
    for r, v in zip(judged, verdicts):
        r.update(stage=v.stage.value, correct=v.correct, runtime_ms=v.times_ms.get("candidate"),
                 eager_ms=v.times_ms.get("eager"), error=v.error[:200],
                 kernelbench=v.protocols.get(kernelbench_protocol.PROTOCOL, {}))
    for r in rows:  # each column's baseline is timed as its candidate times are
        r["baseline_ms"] = r["eager_ms"]
        r["kernelbench_baseline_ms"] = (base[r["problem"]] if base is not None
                                        else r["kernelbench"].get("baseline_mean_ms"))
    protocol = [{"correct": bool(r["kernelbench"].get("correct")), "runtime_ms": r["kernelbench"].get("mean_ms"),
                 "baseline_ms": r["kernelbench_baseline_ms"]} for r in rows]
    columns = {"hawkeye verdicts": scores(rows), "KernelBench protocol": scores(protocol)}
    if kernelbench_results:
        theirs = read_kernelbench_results(kernelbench_results)
        records = [{**theirs.get(r["number"], {"correct": False, "runtime_ms": None}),
                    "baseline_ms": r["kernelbench_baseline_ms"]} for r in rows]
        columns["KernelBench eval_results"] = scores(records)
    return {"level": level, "device": device, "baseline": BASELINE_OURS,
            "kernelbench_baseline": str(baseline) if baseline else BASELINE_KERNELBENCH_METHOD, "rows": rows,
            "columns": columns}


def _ms(x: float | None) -> str:
    return "-" if x is None else f"{x:.4f}"


def render(result: dict) -> str:
    """``report.md``: the fast_p table, then one line per problem: our verdict, device time and
    eager baseline; the KernelBench protocol's verdict, mean time and its baseline."""
    lines = [f"# KernelBench level {result['level']} ({result['device']})", "",
             f"Speedups: hawkeye verdicts over {result['baseline']}; the KernelBench columns over "
             f"{result['kernelbench_baseline']}.", "",
             render_table(result["columns"]), "",
             "| problem | stage | time ms | eager ms | KernelBench protocol | mean ms | its baseline ms |",
             "|---" * 7 + "|"]
    for r in result["rows"]:
        kb = r.get("kernelbench") or {}
        lines.append(f"| {r['problem']} | {r['stage']} | {_ms(r['runtime_ms'])} | {_ms(r['baseline_ms'])} | "
                     f"{'correct' if kb.get('correct') else 'incorrect'} | {_ms(kb.get('mean_ms'))} | "
                     f"{_ms(r.get('kernelbench_baseline_ms'))} |")
    return "\n".join(lines) + "\n"


@kernelbench_app.command("eval")
def eval_command(
    level: int = typer.Option(..., help="KernelBench level (1, 2, 3)."),
    solutions: Path = typer.Option(..., help="Folder of level_<L>_problem_<N>_sample_<S>_kernel.py files."),
    tasks_dir: Path | None = typer.Option(None, help="Folder written by `hawkeye tasks import-kernelbench` "
                                          "(default: its default --out)."),
    baseline: Path | None = typer.Option(None, help="KernelBench baseline timing JSON (results/timing/<GPU>/...)."),
    kernelbench_results: Path | None = typer.Option(None, help="KernelBench's eval_results.json for the same run."),
    tolerance: float = typer.Option(1e-2, min=0.0, help="KernelBench protocol: torch.allclose atol = rtol "
                                    "(1e-2 as KernelBench v0.1; 1e-4 its fp32 tolerance)."),
    device: str = typer.Option("auto", help="cpu (untimed: fast_0 only), cuda, or auto."),
    workers: int | None = typer.Option(None, min=1, help="Candidates judged at once."),
    store: Path | None = typer.Option(None, help="SQLite results store (default: user cache)."),
    out: Path | None = typer.Option(None, help="Report folder (default out/kernelbench/level<L>)."),
    as_json: bool = typer.Option(False, "--json", help="Print the results as JSON."),
) -> None:
    """Judge sample 0 of each problem and print KernelBench's fast_p table beside ours."""
    from hawkeye_env.kernelbench.importer import default_out

    if not solutions.is_dir():
        raise typer.BadParameter(f"no solutions folder {solutions}")
    result = judge_level(tasks_dir or default_out(), level, solutions, device, baseline, kernelbench_results,
                         workers, store, tolerance)
    out = out or Path("out/kernelbench") / f"level{level}"
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps(result, indent=1, default=str) + "\n")
    (out / "report.md").write_text(render(result))
    typer.echo(json.dumps(result, default=str) if as_json else render_table(result["columns"]))


if __name__ == "__main__":
    import sys

    kernelbench_app(["eval", *sys.argv[1:]])
