"""Judge the honest-code corpus and report how much of it the judge accepts, by style.

    python -m bench.honest_corpus --corpus tests/candidates/honest \\
        --kernelbench-problems tests/kernelbench/problems --device cpu \\
        --out bench/results/honest-corpus/honest-corpus-cpu.json

The corpus is a folder of ``<style>/<task>__<name>.py`` candidates (each a ``ModelNew`` doing all
its work in its own Triton kernels); it lives with the tests and is not installed, so its folder
is given on the command line (a relative path is taken from the repository root). Tasks named
``kb_*`` are KernelBench-format problems, imported from ``--kernelbench-problems`` into a
temporary task folder. Every candidate is judged once through ``evaluate_many`` with an empty
store. The JSON holds, per candidate, its style, task, stage, violations (code and message), the
first line of its error and its reward; a table of accepted (stage ``correct``, no violation) over
total by style; and the provenance: date, device, software versions, git commit.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from collections import defaultdict
from pathlib import Path

from bench.provenance import provenance
from hawkeye_env.judge.parent.evaluator import EvalConfig, Evaluator, evaluate_many, resolve_device, software_versions
from hawkeye_env.judge.parent.store import ResultStore
from hawkeye_env.judge.shared.verdict import Stage
from hawkeye_env.kernelbench.importer import import_kernelbench, task_id_for

REPO = Path(__file__).resolve().parents[1]
KERNELBENCH_PREFIX = "kb_"


def repo_path(path: str | Path) -> Path:
    """``path`` as given when absolute, else taken from the repository root."""
    path = Path(path)
    return path if path.is_absolute() else REPO / path


def list_corpus(root: Path) -> list[tuple[str, str, Path]]:
    """``(style, task, path)`` of every ``<style>/<task>__<name>.py`` under ``root``, sorted."""
    if not root.is_dir():
        raise SystemExit(f"honest corpus folder not found: {root} (it is part of the repository checkout, "
                         "not of the installed package; pass --corpus)")
    found = [(p.parent.name, p.stem.split("__")[0], p) for p in sorted(root.glob("*/*.py")) if "__" in p.stem]
    if not found:
        raise SystemExit(f"no <style>/<task>__<name>.py candidates under {root}")
    return found


def import_problems(task_ids: set[str], problems: Path, out: Path) -> None:
    """Import and register the KernelBench-format problems of ``task_ids`` into ``out``."""
    wanted = {t for t in task_ids if t.startswith(KERNELBENCH_PREFIX)}
    if not wanted:
        return
    if not problems.is_dir():
        raise SystemExit(f"KernelBench problems folder not found: {problems} (pass --kernelbench-problems)")
    src = out / "sources_in"
    for p in sorted(problems.rglob("*.py")):
        if task_id_for(p) in wanted:
            (src / p.parent.name).mkdir(parents=True, exist_ok=True)
            (src / p.parent.name / p.name).write_text(p.read_text())
    report = import_kernelbench(src, out / "tasks")
    missing = wanted - {t["id"] for t in report.imported}
    if missing:
        raise SystemExit(f"KernelBench problems not found or refused: {sorted(missing)}")


def config(correctness_only: bool) -> EvalConfig:
    """The judge's configuration: with ``correctness_only`` no baseline is measured (on CUDA a
    verdict is then correct and timed against nothing; acceptance reads correctness alone)."""
    return EvalConfig(seed=0, baselines=(), vendor_baselines=False) if correctness_only else EvalConfig(seed=0)


def _row(style: str, task: str, path: Path, v) -> dict:
    return {"style": style, "task": task, "file": f"{style}/{path.name}", "stage": v.stage.value,
            "accepted": v.stage == Stage.CORRECT and not v.violations,
            "violations": [{"code": x.code, "message": x.message} for x in v.violations],
            "error": (v.error.strip().splitlines() or [""])[0], "reward": v.reward}


def judge_corpus(candidates: list[tuple[str, str, Path]], device: str, workers: int,
                 correctness_only: bool = False, on_row=None) -> list[dict]:
    """One row per candidate: style, task, file, stage, violations, error's first line, reward;
    ``on_row(rows so far)`` after each verdict, in arrival order."""
    jobs = [(task, path.read_text()) for _, task, path in candidates]
    evaluator = Evaluator(ResultStore(":memory:"), config(correctness_only))
    arrived: list[dict] = []

    def progress(i: int, v) -> None:
        print(f"{candidates[i][0]:12s} {candidates[i][2].stem:60s} {v.stage.value}", flush=True)
        arrived.append(_row(*candidates[i], v))
        if on_row is not None:
            on_row(arrived)

    verdicts = evaluate_many(evaluator, jobs, device, workers=workers, use_cache=False, on_verdict=progress)
    return [_row(style, task, path, v) for (style, task, path), v in zip(candidates, verdicts)]


def by_style(rows: list[dict]) -> dict[str, dict[str, int]]:
    """``{style: {"accepted": n, "total": n}}`` plus an ``all`` row."""
    table: dict[str, dict[str, int]] = defaultdict(lambda: {"accepted": 0, "total": 0})
    for r in rows:
        for key in (r["style"], "all"):
            table[key]["total"] += 1
            table[key]["accepted"] += int(r["accepted"])
    return dict(table)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", required=True, help="folder of <style>/<task>__<name>.py candidates")
    parser.add_argument("--kernelbench-problems", default=None, help="folder of the kb_* tasks' problem files")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--correctness-only", action="store_true", help="measure no baseline (CUDA)")
    args = parser.parse_args(argv)
    device = resolve_device(args.device)
    candidates = list_corpus(repo_path(args.corpus))
    with tempfile.TemporaryDirectory(prefix="honest_corpus_") as tmp:
        problems = repo_path(args.kernelbench_problems) if args.kernelbench_problems else Path(tmp) / "none"
        import_problems({t for _, t, _ in candidates}, problems, Path(tmp))
        rows = judge_corpus(candidates, device, args.workers, args.correctness_only,
                            on_row=lambda got: _write(args.out, _report(device, argv, args, got, len(candidates))))
    report = _report(device, argv, args, rows, len(candidates))
    for style, t in report["by_style"].items():
        print(f"{style:12s} {t['accepted']:3d} / {t['total']:3d} accepted")
    _write(args.out, report)


def _report(device: str, argv, args, rows: list[dict], planned: int) -> dict:
    """The results file: provenance, the judge's config, acceptance by style and every row;
    ``complete`` false while rows are still arriving (a run stopped early keeps what it judged)."""
    return {**provenance(device, __spec__.name, argv), "device": device, "versions": software_versions(device),
            "config": config(args.correctness_only).key(), "complete": len(rows) == planned,
            "by_style": by_style(rows), "candidates": rows}


def _write(out: Path | None, report: dict) -> None:
    if out is None:
        return
    out = repo_path(out) if not out.is_absolute() else out
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
