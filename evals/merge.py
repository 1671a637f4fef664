"""Merge best-of-N runs over disjoint task sets into one report.

    python -m evals.merge RUN_DIR [RUN_DIR ...] --out DIR

A suite too large for one machine lease is evaluated as several ``hawkeye eval`` runs (one per task,
one per GPU, one per session). Each run's ``candidates.jsonl`` holds every candidate with its
sample, turn, stage, reward and speedups, which is all the metrics need: the merged report
recomputes them with ``run_eval``'s own ``summarise``, so every per-task figure equals its part's
and the overall curves, rates and geomean speedups cover the union of tasks. Parts must agree on
policy and its description (model, endpoint, sampling parameters, seed), ``n``, turns, context,
device, reward version and GPU; a task judged in two parts is refused. Each part's judge versions
and git commit are listed in ``config.parts`` and in the report, so runs judged by different
judge sources are shown, not hidden. Judged per GPU-minute is the parts' fresh verdicts over the sum of
their judging seconds times their GPUs (no rate when nothing was judged fresh). Every part's
``policy_errors`` and ``warnings`` are kept (an error with its part), failed samples stay out of
the merged metrics as out of a part's, and ``hawkeye``'s exit rule applies to the merged report
as to a part (``error`` is set).
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path

from evals.candidates import CPU_TIMING_NOTE, Candidate, per_minute, summarise

#: Config entries every part must share (a part made before a key was recorded has None for it).
SHARED = ("policy", "policy_config", "n", "turns", "context", "device", "reward_version")


class MergeError(ValueError):
    """The runs cannot be merged; the message says which part and why."""


def load_run(path: Path) -> tuple[dict, list[Candidate]]:
    """``(results.json, candidates)`` of one ``hawkeye eval`` output folder."""
    path = Path(path)
    try:
        results = json.loads((path / "results.json").read_text(encoding="utf-8"))
        rows = (path / "candidates.jsonl").read_text(encoding="utf-8").splitlines()
    except (OSError, json.JSONDecodeError) as exc:
        raise MergeError(f"{path}: not a finished eval output ({exc})") from exc
    return results, [Candidate(**json.loads(line)) for line in rows if line.strip()]


def _trajectories(task: str, candidates: list[Candidate], n: int, where: Path) -> list[list[Candidate]]:
    by_sample: dict[int, list[Candidate]] = defaultdict(list)
    for c in candidates:
        by_sample[c.sample].append(c)
    if sorted(by_sample) != list(range(n)):
        raise MergeError(f"{where}: task {task} has samples {sorted(by_sample)}, expected 0..{n - 1}")
    return [sorted(by_sample[j], key=lambda c: c.turn) for j in range(n)]


def _judge_rate(parts: list[dict]) -> dict:
    judges = [p["judge"] for p in parts]
    judged = sum(j.get("judged", 0) for j in judges)
    judging_s = sum(p["wall_s"]["judging"] for p in parts)
    out = {key: sum(j.get(key, 0) for j in judges) for key in ("candidates", "cached", "policy_failures",
                                                                "unique_sources")}
    out.update(judged=judged, judged_per_minute=per_minute(judged, judging_s), gpus=None, judged_per_gpu_minute=None)
    gpu_s = [p["wall_s"]["judging"] * p["judge"]["gpus"] for p in parts if p["judge"].get("gpus")]
    if len(gpu_s) == len(parts) and per_minute(judged, sum(gpu_s)) is not None:
        out["gpus"] = sorted({p["judge"]["gpus"] for p in parts})[-1]
        out["judged_per_gpu_minute"] = per_minute(judged, sum(gpu_s))
    return out


def merge_runs(dirs: list[Path], out_dir: Path) -> dict:
    """Merge the eval outputs in ``dirs`` into ``out_dir`` (``results.json``, ``candidates.jsonl``,
    plots, ``report.md``); returns the merged ``results.json`` dict."""
    if not dirs:
        raise MergeError("no runs to merge")
    loaded = [(Path(d), *load_run(d)) for d in dirs]
    first = loaded[0][1]["config"]
    by_task: dict[str, list[list[Candidate]]] = {}
    owner: dict[str, Path] = {}
    for where, results, candidates in loaded:
        cfg = results["config"]
        for key in SHARED:
            if cfg.get(key) != first.get(key):
                raise MergeError(f"{where}: {key} is {cfg.get(key)!r}, the first run's is {first.get(key)!r}")
        if cfg["versions"].get("gpu") != first["versions"].get("gpu"):
            raise MergeError(f"{where}: judged on {cfg['versions'].get('gpu')!r}, the first run on "
                             f"{first['versions'].get('gpu')!r}")
        for task in cfg["tasks"]:
            if task in owner:
                raise MergeError(f"task {task} is in both {owner[task]} and {where}")
            owner[task] = where
            by_task[task] = _trajectories(task, [c for c in candidates if c.task == task], cfg["n"], where)
    parts = [results for _, results, _ in loaded]
    candidates = [c for trajs in by_task.values() for t in trajs for c in t]
    results = {
        "config": {
            **{key: first.get(key) for key in SHARED}, "tasks": list(by_task), "workers": "per part",
            "store": "per part", "backend": first.get("backend"), "gpus": None,
            "judge": first.get("judge"), "versions": first["versions"],
            "git_commit": " ".join(sorted({r["config"].get("git_commit") or "unknown" for _, r, _ in loaded})),
            "parts": [{"dir": str(where), "tasks": r["config"]["tasks"], "versions": r["config"]["versions"],
                       "judge": r["config"].get("judge"), "git_commit": r["config"].get("git_commit"),
                       "wall_s": r["wall_s"]} for where, r, _ in loaded],
        },
        **summarise(by_task, first["turns"]),
        "timing_note": CPU_TIMING_NOTE if not any(c.timed for c in candidates) else "",
        "judge": _judge_rate(parts),
        "policy_errors": [{**e, "part": str(where)} for where, r, _ in loaded for e in r.get("policy_errors", [])],
        "warnings": [w for _, r, _ in loaded for w in r.get("warnings", [])],
        "wall_s": {key: sum(p["wall_s"].get(key, 0.0) for p in parts) for key in ("sampling", "judging", "total")},
        "wandb": None,
    }
    results["error"] = (f"the policy failed {len(results['policy_errors'])} time(s) across the parts; first: "
                        f"{results['policy_errors'][0].get('error')}" if results["policy_errors"] else "")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "candidates.jsonl", "w", encoding="utf-8") as f:
        for c in candidates:
            f.write(json.dumps(c.__dict__, sort_keys=True) + "\n")
    from evals import plots, report

    results["plots"] = [p.name for p in plots.make_plots(results, candidates, out)]
    path = report.write_markdown(results, out)
    lines = ["", "## Parts", "", "| run | tasks | judge sources | torch | triton | git commit |",
             "| --- | --- | --- | --- | --- | --- |"]
    for part in results["config"]["parts"]:
        v = part["versions"]
        lines.append(f"| `{part['dir']}` | {', '.join(part['tasks'])} | {v.get('judge', '-')} | "
                     f"{v.get('torch', '-')} | {v.get('triton', '-')} | {part.get('git_commit') or '-'} |")
    with open(path, "a", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    (out / "results.json").write_text(json.dumps(results, indent=1, sort_keys=True, default=str), encoding="utf-8")
    return results


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", type=Path, help="hawkeye eval output folders (disjoint tasks)")
    parser.add_argument("--out", type=Path, required=True, help="folder for the merged report")
    args = parser.parse_args(argv)
    try:
        results = merge_runs(args.runs, args.out)
    except MergeError as exc:
        parser.exit(2, f"error: {exc}\n")
    overall = results["overall"]
    print(f"merged {len(results['config']['tasks'])} tasks from {len(args.runs)} runs into {args.out}/report.md")
    for name, g in overall.get("geomean_best_speedup", {}).items():
        print(f"  geomean best speedup vs {name}: {g['over_solved']} over {g['solved_tasks']}/{g['tasks']} tasks")
    return results


if __name__ == "__main__":
    main()
