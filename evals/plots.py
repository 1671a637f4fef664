"""Plots of one best-of-N evaluation (``evals/best_of_n.py``), drawn with matplotlib's Agg backend.

``make_plots`` writes:

- ``best_of_k.png``: expected best reward of k trajectories (per task and the task mean), pass@k
  of correctness and, when timed, expected best speedup over the fastest baseline;
- ``distributions.png``: candidates per judge stage, with the replies the policy failed to
  produce as a bar of their own (never judged), and the reward histogram of the obtained
  candidates (and the speedup histogram when timed);
- ``best_by_turn.png`` (turns > 1): mean best reward reached by each turn.

Titles name the reward version the verdicts were scored with (``config.reward_version``) and the
policy's model; a run with policy failures says how many samples failed in the figure's title.
The per-task legend sits below the axes, in as many columns as it needs, so it covers no curve at
28 tasks or more; per-task lines cycle 20 colours and 4 line styles, the task mean is black.

matplotlib is optional (``pip install 'hawkeye-env[dev]'``); without it ``make_plots`` returns []
with that hint.

Example::

    from evals.plots import make_plots
    make_plots(results, candidates, out_dir)  # [out_dir/'best_of_k.png', out_dir/'distributions.png']
"""

from __future__ import annotations

import logging
import math
from itertools import cycle, product
from pathlib import Path

from evals.candidates import POLICY_ERROR

log = logging.getLogger(__name__)
INSTALL_HINT = "plots need matplotlib: pip install 'hawkeye-env[dev]' (or pip install matplotlib)"
#: Legend entries per column: 28 tasks and the mean make 4 columns of 8 lines.
LEGEND_ROWS = 8
DPI = 110
#: Figure layout in inches, fixed rather than computed (``tight_layout`` and ``bbox_inches="tight"``
#: each draw the figure once more): the axes' height, the room above them for a two-line title,
#: below them for tick labels and an x label (rotated stage names need the larger one), per
#: legend line at fontsize 7, and left of the first axes for its tick labels ("-1.00") and y
#: label. ``tests/evals/test_eval_records.py`` checks at 30 tasks named as long as the longest
#: task id that the legend is inside the figure and covers no axes, tick label or axis label.
AXES_IN, TOP_IN, BOTTOM_IN, ROTATED_BOTTOM_IN, LEGEND_LINE_IN, LEFT_IN = 3.0, 0.85, 0.6, 1.2, 0.16, 0.9
#: A legend column's width in inches: the line handle and its gap, and per character of the
#: longest label at fontsize 7 (above DejaVu Sans' average width at that size, so it never clips).
LEGEND_HANDLE_IN, LEGEND_CHAR_IN = 0.7, 0.065


def pyplot():
    """matplotlib's pyplot on the Agg backend, or None (with the install hint logged)."""
    try:
        import matplotlib
    except ImportError:
        log.warning(INSTALL_HINT)
        return None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def reward_label(results: dict) -> str:
    """The reward version the run's verdicts were scored with (``v3``), from its config."""
    cfg = results["config"]
    return cfg.get("reward_version") or cfg.get("versions", {}).get("reward") or "reward version unknown"


def _title(results: dict) -> str:
    cfg, overall = results["config"], results["overall"]
    model = (cfg.get("policy_config") or {}).get("model")
    title = (f"{cfg['policy']}{f' ({model})' if model else ''}: n={cfg['n']}, turns={cfg['turns']}, "
             f"{cfg['device']}, reward {reward_label(results)}")
    failed = overall.get("policy_failures", 0)
    if failed:
        title += (f"\n{failed} of {overall['candidates']} samples failed (policy, not judged): "
                  "left out of every curve")
    return title


def _floats(values: list) -> list[float]:
    return [math.nan if v is None else v for v in values]


def _curve_axis(ax, results: dict, key: str, title: str, ylabel: str, ylim: tuple | None = None) -> None:
    from matplotlib import colormaps

    styles = cycle(product(["-", "--", ":", "-."], colormaps["tab20"].colors))
    for task, metrics in results["tasks"].items():
        style, color = next(styles)
        if metrics.get(key):
            ks = range(1, len(metrics[key]) + 1)
            ax.plot(ks, _floats(metrics[key]), marker=".", alpha=0.6, linestyle=style, color=color, label=task)
    if results["overall"].get(key):
        curve = results["overall"][key]
        ax.plot(range(1, len(curve) + 1), _floats(curve), color="black", linewidth=2.5, label="mean over tasks")
    ax.set(title=title, xlabel="k (trajectories)", ylabel=ylabel)
    if ylim is not None:
        ax.set_ylim(*ylim)
    ax.xaxis.get_major_locator().set_params(integer=True)
    ax.grid(alpha=0.3)


def _figure(plt, columns: int, legend: list[str] | None = None, bottom_in: float = BOTTOM_IN):
    """A figure of ``columns`` axes (5 inches wide each, 6 for one, wider when the legend needs it)
    laid out with the fixed margins above, with room at the bottom for the ``legend`` labels
    (``_legend_below``)."""
    legend = legend or []
    columns_of_legend = math.ceil(len(legend) / LEGEND_ROWS)
    legend_width = columns_of_legend * (LEGEND_HANDLE_IN + LEGEND_CHAR_IN * max(map(len, legend), default=0))
    width = max(6, 5 * columns, legend_width + 0.4)
    legend_in = LEGEND_LINE_IN * min(LEGEND_ROWS, len(legend)) + 0.1 if legend else 0.0
    height = TOP_IN + AXES_IN + bottom_in + legend_in
    fig, axes = plt.subplots(1, columns, figsize=(width, height))
    fig.subplots_adjust(left=LEFT_IN / width, right=0.98, wspace=0.25, top=1 - TOP_IN / height,
                        bottom=(bottom_in + legend_in) / height)
    return fig, list(axes) if columns > 1 else [axes]


def _legend_below(fig, ax) -> None:
    """The legend of ``ax``'s lines at the bottom of the figure, below the axes and their labels,
    ``LEGEND_ROWS`` entries a column."""
    handles, labels = ax.get_legend_handles_labels()
    if handles:
        fig.legend(handles, labels, loc="lower center", bbox_to_anchor=(0.5, 0.0), fontsize=7, frameon=False,
                   ncol=max(1, math.ceil(len(labels) / LEGEND_ROWS)))


def _legend_labels(results: dict, key: str) -> list[str]:
    """The legend of the ``key`` curves: the tasks that have one, then the mean."""
    return [task for task, m in results["tasks"].items() if m.get(key)] + (
        ["mean over tasks"] if results["overall"].get(key) else [])


def curves_figure(results: dict, plt):
    """The best-of-k figure (module docstring)."""
    timed = bool(results["overall"].get("best_of_k_speedup"))
    fig, axes = _figure(plt, 3 if timed else 2, _legend_labels(results, "best_of_k_reward"))
    _curve_axis(axes[0], results, "best_of_k_reward", f"best-of-k reward ({reward_label(results)})",
                "E[max reward]", (-1.05, 1.05))
    _curve_axis(axes[1], results, "pass_at_k", "pass@k (any correct)", "P(correct in k)", (0.0, 1.05))
    if timed:
        _curve_axis(axes[2], results, "best_of_k_speedup", "best-of-k speedup vs fastest baseline",
                    "E[max speedup] (0 = none correct)")
    fig.suptitle(_title(results))
    _legend_below(fig, axes[0])
    return fig


def distributions_figure(results: dict, candidates: list, plt):
    """The stages and reward (and speedup) histograms (module docstring)."""
    obtained = [c for c in candidates if c.stage != POLICY_ERROR]
    speedups = [min(c.speedup.values()) for c in obtained if c.correct and c.timed and c.speedup]
    fig, axes = _figure(plt, 3 if speedups else 2, bottom_in=ROTATED_BOTTOM_IN)
    stages = {k: v for k, v in results["overall"]["stages"].items() if v}
    names = [("policy failure\n(not judged)" if k == POLICY_ERROR else k) for k in stages]
    colors = ["tab:red" if k == POLICY_ERROR else "tab:blue" for k in stages]
    axes[0].bar(names, list(stages.values()), color=colors)
    axes[0].set(title="candidates per stage", ylabel="count")
    axes[0].tick_params(axis="x", rotation=30)
    axes[1].hist([c.reward for c in obtained], bins=20, range=(-1.0, 1.0), color="tab:green")
    failed = len(candidates) - len(obtained)
    axes[1].set(title=f"reward ({reward_label(results)}): {len(obtained)} obtained"
                + (f", {failed} failed not shown" if failed else ""), xlabel="reward", ylabel="count")
    if speedups:
        axes[2].hist(speedups, bins=20, color="tab:orange")
        axes[2].axvline(1.0, color="black", linestyle="--")
        axes[2].set(title="speedup of correct candidates (fastest baseline)", xlabel="speedup", ylabel="count")
    fig.suptitle(_title(results))
    return fig


def by_turn_figure(results: dict, plt):
    """Mean best reward reached by each turn (module docstring)."""
    fig, [ax] = _figure(plt, 1, _legend_labels(results, "best_reward_by_turn"))
    _curve_axis(ax, results, "best_reward_by_turn", f"best reward ({reward_label(results)}) reached by turn",
                "mean best reward", (-1.05, 1.05))
    ax.set_xlabel("turn")
    fig.suptitle(_title(results))
    _legend_below(fig, ax)
    return fig


def make_plots(results: dict, candidates: list, out_dir: Path) -> list[Path]:
    """Write the PNGs described in the module docstring; returns their paths ([] without matplotlib)."""
    plt = pyplot()
    if plt is None:
        return []
    figures = {"best_of_k.png": curves_figure(results, plt),
               "distributions.png": distributions_figure(results, candidates, plt)}
    if results["config"]["turns"] > 1 and results["overall"].get("best_reward_by_turn"):
        figures["best_by_turn.png"] = by_turn_figure(results, plt)
    paths = []
    for name, fig in figures.items():
        paths.append(Path(out_dir) / name)
        fig.savefig(paths[-1], dpi=DPI)
        plt.close(fig)
    return paths


__all__ = ["INSTALL_HINT", "by_turn_figure", "curves_figure", "distributions_figure", "make_plots", "reward_label"]
