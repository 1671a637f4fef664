"""The Markdown report of one best-of-N evaluation (``evals/best_of_n.py``): ``report.md``.

``write_markdown`` writes what was evaluated and how (policy, model, endpoint, sampling
parameters, n, turns, context, device, judge and reward versions, git commit), what the judge did
(with an honest rate: none when nothing was judged fresh), the policy's failures and the warnings
of the run before any figure, the overall and per-task tables (rates over the obtained samples;
failed samples counted apart), the curves as numbers and the plots (``evals/plots.py``).
"""

from __future__ import annotations

from pathlib import Path

from evals.plots import reward_label

#: Policy errors quoted in the report (all are in ``results.json``).
ERRORS_SHOWN = 5


def _fmt(x) -> str:
    if x is None:
        return "-"
    return f"{x:.3f}" if isinstance(x, float) else str(x)


def _curve(values: list[float | None] | None) -> str:
    return " ".join(_fmt(v) for v in values) if values else "-"


def _rate_line(judge: dict) -> str:
    """``N sources judged fresh: X per minute (Y per GPU-minute on G GPUs)``, or what the judge did
    instead when nothing was judged fresh (no rate); older results lack it."""
    if "judged" not in judge:
        return ""
    if not judge["judged"] or judge.get("judged_per_minute") is None:
        return (f"no source judged fresh ({judge['cached']} answered from the store, "
                f"{judge.get('policy_failures', 0)} policy failures): no judging rate")
    line = f"{judge['judged']} sources judged fresh: {judge['judged_per_minute']:.1f} per minute"
    if judge.get("judged_per_gpu_minute") is not None:
        line += f" ({judge['judged_per_gpu_minute']:.1f} per GPU-minute on {judge['gpus']} GPU(s))"
    return line


def _provenance(results: dict) -> list[str]:
    """What ran: the policy's description, the judge's and reward's versions, the commit."""
    cfg = results["config"]
    versions = cfg.get("versions", {})
    policy = ", ".join(f"{k} `{v}`" for k, v in (cfg.get("policy_config") or {}).items() if k != "name")
    return [
        f"policy `{cfg['policy']}`: {policy or 'no description recorded'}",
        f"tasks {', '.join(cfg['tasks'])}; n={cfg['n']} trajectories, turns={cfg['turns']}, context "
        f"`{cfg['context']}`, device `{cfg['device']}` ({versions.get('gpu', '')}), workers {cfg['workers']}",
        f"judge sources `{versions.get('judge', '-')}`, reward `{reward_label(results)}`, torch "
        f"`{versions.get('torch', '-')}`, triton `{versions.get('triton', '-')}`; git commit "
        f"`{cfg.get('git_commit') or 'unknown'}`",
    ]


def _failures(results: dict) -> list[str]:
    """The policy's failures and the run's warnings, before any figure."""
    lines = []
    overall, errors = results["overall"], results.get("policy_errors") or []
    if overall.get("policy_failures"):
        lines += [f"**Policy failures:** {overall['policy_failures']} of {overall['candidates']} samples could not "
                  "be obtained from the policy: not judged, and left out of every rate, reward and curve below "
                  f"({len(errors)} failed requests, all in `results.json` under `policy_errors`).", ""]
        lines += [f"- {e.get('task_id', e.get('task', '?'))} turn {e.get('turn', 0)}: {e.get('error')}"
                  for e in errors[:ERRORS_SHOWN]] + [""]
        if overall.get("tasks_without_samples"):
            lines += [f"No sample obtained for: {', '.join(overall['tasks_without_samples'])}.", ""]
    for warning in results.get("warnings") or []:
        lines += [f"**Warning:** {warning}", ""]
    return lines


def _overall_rows(overall: dict) -> list[str]:
    lines = ["## Overall", "", "| metric | value |", "| --- | --- |"]
    for key in ("candidates", "obtained", "policy_failures", "compile_rate", "correct_rate", "violation_rate",
                "mean_reward"):
        if key in overall:
            lines.append(f"| {key} | {_fmt(overall[key])} |")
    for baseline, values in overall["fast_p"].items():
        lines.append(f"| fast_p vs {baseline} | " + ", ".join(f"p={p}: {v:.3f}" for p, v in values.items()) + " |")
    for baseline, g in overall.get("geomean_best_speedup", {}).items():
        lines.append(f"| geomean best speedup vs {baseline} | {_fmt(g['over_solved'])} over {g['solved_tasks']}/"
                     f"{g['tasks']} solved tasks; {_fmt(g['unsolved_as_1'])} counting unsolved as 1.0 |")
    for key in ("best_of_k_reward", "pass_at_k", "best_of_k_speedup", "best_reward_by_turn"):
        if overall.get(key):
            lines.append(f"| {key} (k or turn = 1..) | {_curve(overall[key])} |")
    return lines


def _task_rows(tasks: dict) -> list[str]:
    lines = ["## Per task", "",
             "| task | obtained | failed | compile | correct | violations | mean reward | best-of-n reward | pass@n "
             "| best speedup |", "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for task, m in tasks.items():
        best = m.get("best_speedup", {}).get("best")
        lines.append(f"| {task} | {m.get('obtained', m['candidates'])} | {m.get('policy_failures', 0)} | "
                     f"{_fmt(m['compile_rate'])} | {_fmt(m['correct_rate'])} | {_fmt(m['violation_rate'])} | "
                     f"{_fmt(m['mean_reward'])} | {_fmt(_last(m.get('best_of_k_reward')))} | "
                     f"{_fmt(_last(m.get('pass_at_k')))} | {_fmt(best)} |")
    return lines


def _last(curve: list | None):
    return curve[-1] if curve else None


def write_markdown(results: dict, out_dir: Path) -> Path:
    """Write ``report.md`` from ``results`` (and the plots already in ``out_dir``); returns its path."""
    cfg, judge = results["config"], results["judge"]
    lines = [f"# Best-of-N evaluation: policy `{cfg['policy']}`", "", *_provenance(results),
             f"judge: {judge['candidates']} candidates, {judge['unique_sources']} unique, {judge['cached']} answered "
             f"from the store ({cfg['store']}); sampling {results['wall_s']['sampling']:.1f} s, judging "
             f"{results['wall_s']['judging']:.1f} s", _rate_line(judge)]
    if results.get("samples", {}).get("reused"):
        lines.append(f"{results['samples']['reused']} replies reused from `{results['samples']['file']}` "
                     "(a resumed run)")
    lines.append("")
    lines += _failures(results)
    if results.get("timing_note"):
        lines += [f"**Note:** {results['timing_note']}.", ""]
    lines += _overall_rows(results["overall"]) + [""] + _task_rows(results["tasks"]) + ["", "## Plots", ""]
    lines += [f"![{name}]({name})" for name in results.get("plots", [])] or ["(no plots: matplotlib missing)"]
    if results.get("wandb"):
        wb = results["wandb"]
        lines += ["", "## W&B", "", f"{wb['mode']} run in `{wb['dir']}`"]
        if wb.get("sync"):
            lines.append(f"upload it with `{wb['sync']}`")
    path = Path(out_dir) / "report.md"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
