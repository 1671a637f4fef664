"""Markdown tables of the product benchmarks (``bench.tables``' conventions).

Schemas read:

* ``best_of_n``: a ``hawkeye eval`` folder (its ``results.json``), or ``python -m bench.search``'s
  JSON (its first sandboxed phase's ``best_of_n``).
* ``grpo``: the JSON of a ``hawkeye train grpo`` run.
"""

from __future__ import annotations

import math

from bench.tables import Loaded, fmt, md_table

BEST_OF_K = (1, 2, 4, 8, 16, 32)
JUDGE_BASELINES = ("best", "eager", "compile")
# A best speedup counts as ahead of a task's fastest baseline above this: repeated verdicts of one
# kernel on the H200 stay within 1.003-1.030x of each other (judge-calibration-h200-2026-12-02.json).
AHEAD = 1.03


def _best_of_n_results(f: Loaded) -> dict:
    """``f``'s best-of-N metrics: a ``results.json`` as it is, a search-batch report's first sandboxed
    phase's ``best_of_n``."""
    if "phases" not in f.data:
        return f.data
    phase = next(p for p in f.data["phases"] if p.get("mode") == "bwrap" and p.get("best_of_n"))
    return {**phase["best_of_n"], "judge": {}}


def best_of_n(files: list[Loaded]) -> list[str]:
    """Per task: correct rate, best-of-k speedup over the fastest baseline, best speedup over
    torch.compile and each vendor; then the suite's geomeans. A file is a ``hawkeye eval`` run's
    ``results.json`` or an ``bench.search`` report, whose first sandboxed phase's
    ``best_of_n`` is read (the same metrics, of the search policy's first turn)."""
    rows, lines = [], []
    for f in files:
        results = _best_of_n_results(f)
        for task, t in results["tasks"].items():
            curve = t.get("best_of_k_speedup") or []
            ks = ", ".join(fmt(curve[k - 1], ".2f") for k in BEST_OF_K if k <= len(curve))
            best = t.get("best_speedup", {})
            vendors = ", ".join(f"{n} {v:.2f}x" for n, v in sorted(best.items()) if n not in JUDGE_BASELINES)
            rows.append([task, str(t["candidates"]), fmt(t["correct_rate"], ".2f"), ks,
                         fmt(best.get("compile"), ".2f") + "x", vendors or "-"])
        overall, judge = results["overall"], results.get("judge", {})
        geo = overall.get("geomean_best_speedup", {})
        parts = [f"{n} {g['over_solved']:.2f}x ({g['solved_tasks']} tasks)" for n, g in sorted(geo.items())]
        if len(files) > 1:
            lines.append(f"`{f.path}` ({', '.join(results['tasks'])}):")
        lines.append(f"{overall['candidates']} candidates; compile rate {overall['compile_rate']:.2f}, correct rate "
                     f"{overall['correct_rate']:.2f}, violation rate {overall['violation_rate']:.3f}.")
        lines.append("Geomean best speedup over each baseline: " + ", ".join(parts) + ".")
        curve = overall.get("best_of_k_speedup") or []
        if curve:
            lines.append("Best-of-k speedup over the fastest baseline, averaged over the tasks, k = "
                         + ", ".join(str(k) for k in BEST_OF_K if k <= len(curve)) + ": "
                         + ", ".join(fmt(curve[k - 1], ".2f") for k in BEST_OF_K if k <= len(curve)) + ".")
        if judge.get("judged"):
            lines.append(f"{judge['judged']} fresh verdicts, {judge['judged_per_gpu_minute']:.1f} per GPU-minute.")
    tasks = {task: t for f in files for task, t in _best_of_n_results(f)["tasks"].items()}
    curves = [t.get("best_of_k_speedup") or [] for t in tasks.values()]
    longest = max((len(c) for c in curves), default=0)
    if len(files) > 1:
        lines += ["", _suite_line(tasks)]
    shown = ", ".join(str(k) for k in BEST_OF_K if k <= longest)
    header = ["task", "candidates", "correct", f"best-of-k speedup over the fastest baseline, k = {shown}",
              "best vs torch.compile", "best vs vendor"]
    return md_table(header, rows) + [""] + lines


GRPO_COLUMNS = (
    ("reward", "reward (mean)", ".3f"), ("reward_std", "reward std", ".3f"),
    ("judge/compile_rate", "compiled", ".2f"), ("judge/correct_rate", "correct", ".2f"),
    ("judge/timed_rate", "timed", ".2f"), ("judge/violation_rate", "violations", ".2f"),
    ("judge/mean_speedup", "mean speedup", ".2f"), ("step_time", "step s", ".1f"),
)


def grpo(files: list[Loaded]) -> list[str]:
    """GRPO steps (reward and the judge's rates per step) after the supervised warm start."""
    rows, lines = [], []
    for f in files:
        run = f.data
        for i, step in enumerate(run["grpo_steps"], start=1):
            rows.append([str(i), *(fmt(step.get(key), spec) for key, _, spec in GRPO_COLUMNS)])
        sft = run.get("sft", {})
        if sft:
            last = sft.get("last", {})
            lines.append(f"Supervised warm start: {sft['steps']} steps, "
                         f"{fmt(sft.get('summary', {}).get('train_runtime'), '.0f')} s, final token accuracy "
                         f"{fmt(last.get('mean_token_accuracy'), '.2f')}.")
        split = run.get("split", {})
        if split:
            train, held_out = ", ".join(split.get("train", [])), ", ".join(split.get("eval", []))
            lines.append(f"Tasks: train {train}; held out {held_out}.")
    return md_table(["step", *(label for _, label, _ in GRPO_COLUMNS)], rows) + ([""] + lines if lines else [])


def _suite_line(tasks: dict[str, dict]) -> str:
    """One sentence over every task of every file: the best-of-k curve averaged over the tasks up to
    the shortest solved task's k (unsolved tasks count 0), the geomean over solved tasks of the best
    speedup over each task's fastest baseline, and the tasks whose best beats it by more than the
    measurement's spread (``AHEAD``)."""
    curves = [t.get("best_of_k_speedup") or [] for t in tasks.values()]
    shortest = min((len(c) for c in curves if c), default=0)
    ks = [k for k in BEST_OF_K if k <= shortest]
    mean = [sum(c[k - 1] if c else 0.0 for c in curves) / len(curves) for k in ks]
    best = {task: t["best_speedup"]["best"] for task, t in tasks.items() if t.get("best_speedup", {}).get("best")}
    geomean = math.prod(best.values()) ** (1 / len(best)) if best else float("nan")
    ahead = sorted(task for task, v in best.items() if v > AHEAD)
    return (f"All {len(tasks)} tasks: best-of-k speedup over each task's fastest baseline, averaged over the tasks, "
            f"k = {', '.join(map(str, ks))}: {', '.join(fmt(v, '.2f') for v in mean)}; the best candidate's geomean "
            f"{geomean:.2f}x over {len(best)} solved tasks; more than {AHEAD:.2f}x the fastest baseline on {len(ahead)}"
            + (f" ({', '.join(ahead)})." if ahead else "."))
