"""Plots and a Markdown report of one best-of-N evaluation (``evals/best_of_n.py``).

``make_plots`` draws, with matplotlib's Agg backend (no display needed):

- ``best_of_k.png``: expected best reward of k trajectories (per task and the task mean), pass@k
  of correctness and, when timed, expected best speedup over the fastest baseline;
- ``distributions.png``: candidates per judge stage and the reward histogram (and the speedup
  histogram when timed);
- ``best_by_turn.png`` (turns > 1): mean best reward reached by each turn.

``write_markdown`` writes ``report.md``: configuration, overall and per-task tables, the curves as
numbers and the plots. matplotlib is optional (``pip install 'hawkeye-env[dev]'``); without it the
plots are skipped with that hint and the report is still written.
"""

from __future__ import annotations

import logging
from pathlib import Path

log = logging.getLogger(__name__)
INSTALL_HINT = "plots need matplotlib: pip install 'hawkeye-env[dev]' (or pip install matplotlib)"


def _pyplot():
    try:
        import matplotlib
    except ImportError:
        log.warning(INSTALL_HINT)
        return None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _curve_axis(ax, results: dict, key: str, title: str, ylabel: str, ylim: tuple | None = None) -> None:
    for task, metrics in results["tasks"].items():
        if key in metrics:
            ks = range(1, len(metrics[key]) + 1)
            ax.plot(ks, metrics[key], marker=".", alpha=0.5, label=task)
    if key in results["overall"]:
        curve = results["overall"][key]
        ax.plot(range(1, len(curve) + 1), curve, color="black", linewidth=2.5, label="mean over tasks")
    ax.set(title=title, xlabel="k (trajectories)", ylabel=ylabel)
    if ylim is not None:
        ax.set_ylim(*ylim)
    ax.xaxis.get_major_locator().set_params(integer=True)
    ax.grid(alpha=0.3)


def make_plots(results: dict, candidates: list, out_dir: Path) -> list[Path]:
    """Write the PNGs described in the module docstring; returns their paths ([] without matplotlib)."""
    plt = _pyplot()
    if plt is None:
        return []
    out_dir = Path(out_dir)
    paths: list[Path] = []
    overall = results["overall"]
    timed = "best_of_k_speedup" in overall

    fig, axes = plt.subplots(1, 3 if timed else 2, figsize=(15 if timed else 10, 4))
    _curve_axis(axes[0], results, "best_of_k_reward", "best-of-k reward (v1)", "E[max reward]", (-1.05, 1.05))
    _curve_axis(axes[1], results, "pass_at_k", "pass@k (any correct)", "P(correct in k)", (0.0, 1.05))
    if timed:
        _curve_axis(axes[2], results, "best_of_k_speedup", "best-of-k speedup vs fastest baseline",
                    "E[max speedup] (0 = none correct)")
    axes[0].legend(fontsize=7)
    fig.suptitle(f"{results['config']['policy']}: n={results['config']['n']}, turns={results['config']['turns']}, "
                 f"{results['config']['device']}")
    fig.tight_layout()
    paths.append(out_dir / "best_of_k.png")
    fig.savefig(paths[-1], dpi=110)
    plt.close(fig)

    speedups = [min(c.speedup.values()) for c in candidates if c.correct and c.timed and c.speedup]
    fig, axes = plt.subplots(1, 3 if speedups else 2, figsize=(15 if speedups else 10, 4))
    stages = {k: v for k, v in overall["stages"].items() if v}
    axes[0].bar(list(stages), list(stages.values()), color="tab:blue")
    axes[0].set(title="candidates per stage", ylabel="count")
    axes[0].tick_params(axis="x", rotation=30)
    axes[1].hist([c.reward for c in candidates], bins=20, range=(-1.0, 1.0), color="tab:green")
    axes[1].set(title="reward (v1) distribution", xlabel="reward", ylabel="count")
    if speedups:
        axes[2].hist(speedups, bins=20, color="tab:orange")
        axes[2].axvline(1.0, color="black", linestyle="--")
        axes[2].set(title="speedup of correct candidates (fastest baseline)", xlabel="speedup", ylabel="count")
    fig.tight_layout()
    paths.append(out_dir / "distributions.png")
    fig.savefig(paths[-1], dpi=110)
    plt.close(fig)

    if results["config"]["turns"] > 1 and "best_reward_by_turn" in overall:
        fig, ax = plt.subplots(figsize=(5, 4))
        _curve_axis(ax, results, "best_reward_by_turn", "best reward reached by turn", "mean best reward",
                    (-1.05, 1.05))
        ax.set_xlabel("turn")
        fig.tight_layout()
        paths.append(out_dir / "best_by_turn.png")
        fig.savefig(paths[-1], dpi=110)
        plt.close(fig)
    return paths


def _fmt(x) -> str:
    if x is None:
        return "-"
    return f"{x:.3f}" if isinstance(x, float) else str(x)


def _curve(values: list[float] | None) -> str:
    return " ".join(f"{v:.3f}" for v in values) if values else "-"


def _rate_line(judge: dict) -> str:
    """``N sources judged fresh: X per minute (Y per GPU-minute on G GPUs)``; older results lack it."""
    if judge.get("judged_per_minute") is None:
        return ""
    line = f"{judge['judged']} sources judged fresh: {judge['judged_per_minute']:.1f} per minute"
    if judge.get("judged_per_gpu_minute") is not None:
        line += f" ({judge['judged_per_gpu_minute']:.1f} per GPU-minute on {judge['gpus']} GPU(s))"
    return line


def write_markdown(results: dict, out_dir: Path) -> Path:
    """Write ``report.md`` from ``results`` (and the plots already in ``out_dir``); returns its path."""
    cfg, overall = results["config"], results["overall"]
    lines = [
        f"# Best-of-N evaluation: policy `{cfg['policy']}`",
        "",
        f"tasks {', '.join(cfg['tasks'])}; n={cfg['n']} trajectories, turns={cfg['turns']}, context "
        f"`{cfg['context']}`, device `{cfg['device']}` ({cfg['versions'].get('gpu', '')}), workers {cfg['workers']}",
        f"judge: {results['judge']['candidates']} candidates, {results['judge']['unique_sources']} unique, "
        f"{results['judge']['cached']} answered from the store ({cfg['store']}); "
        f"sampling {results['wall_s']['sampling']:.1f} s, judging {results['wall_s']['judging']:.1f} s",
        _rate_line(results["judge"]),
        "",
    ]
    if results.get("timing_note"):
        lines += [f"**Note:** {results['timing_note']}.", ""]
    lines += ["## Overall", "", "| metric | value |", "| --- | --- |"]
    for key in ("candidates", "compile_rate", "correct_rate", "violation_rate", "mean_reward"):
        lines.append(f"| {key} | {_fmt(overall[key])} |")
    for baseline, values in overall["fast_p"].items():
        lines.append(f"| fast_p vs {baseline} | " + ", ".join(f"p={p}: {v:.3f}" for p, v in values.items()) + " |")
    for baseline, g in overall.get("geomean_best_speedup", {}).items():
        lines.append(f"| geomean best speedup vs {baseline} | {_fmt(g['over_solved'])} over {g['solved_tasks']}/"
                     f"{g['tasks']} solved tasks; {_fmt(g['unsolved_as_1'])} counting unsolved as 1.0 |")
    for key in ("best_of_k_reward", "pass_at_k", "best_of_k_speedup", "best_reward_by_turn"):
        if key in overall:
            lines.append(f"| {key} (k or turn = 1..) | {_curve(overall[key])} |")
    lines += ["", "## Per task", "",
              "| task | compile | correct | violations | mean reward | best-of-n reward | pass@n | best speedup |",
              "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for task, m in results["tasks"].items():
        best = m.get("best_speedup", {}).get("best")
        lines.append(f"| {task} | {m['compile_rate']:.2f} | {m['correct_rate']:.2f} | {m['violation_rate']:.2f} | "
                     f"{m['mean_reward']:.3f} | {_fmt(m['best_of_k_reward'][-1])} | {_fmt(m['pass_at_k'][-1])} | "
                     f"{_fmt(best)} |")
    lines += ["", "## Plots", ""]
    lines += [f"![{name}]({name})" for name in results.get("plots", [])] or ["(no plots: matplotlib missing)"]
    if results.get("wandb"):
        wb = results["wandb"]
        lines += ["", "## W&B", "", f"{wb['mode']} run in `{wb['dir']}`"]
        if wb.get("sync"):
            lines.append(f"upload it with `{wb['sync']}`")
    path = Path(out_dir) / "report.md"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
