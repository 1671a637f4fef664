"""Best-of-N and multi-turn evaluation of a policy: sample, judge, score, report.

    hawkeye eval --policy search                       # the CLI front end (hawkeye_env/cli.py)
    python -c "from evals.best_of_n import run_eval; from policies import make_policy; \
               run_eval(make_policy('search'), ['vector_add_fp32'], n=3, out_dir='out/eval')"

For every task the policy samples ``n`` replies (``n`` trajectories); each reply becomes candidate
source through ``hawkeye_env.edits.to_candidate`` and all candidates of a turn are judged together by
``evaluate_many`` (``workers`` worker processes at once). With ``turns > 1`` every trajectory sends
its current source and the judge's feedback back to the policy, which answers with one reply per
trajectory. A reply that cannot be turned into source (``EditError``) is judged as its raw text, so
the evaluator scores it (``no_source`` or ``compile_error``) like any other candidate and the store
keeps the verdict; the edit error is prepended to that trajectory's next feedback and its current
source stays unchanged.

Resumable: every verdict is cached in the results store under its source hash, so re-running an
eval (same policy, seed and store) judges nothing again.

Outputs under ``out_dir``: ``results.json`` (config, overall and per-task metrics),
``candidates.jsonl`` (one row per candidate), ``sources/<task>/<hash>.py``, the plots and
``report.md`` (``evals/report.py``) and, unless disabled, a W&B run (``evals/wandb_log.py``).

Metrics, per task and overall (pooled over candidates, or averaged over tasks for curves):
compile, correct and violation rates; fast_p at p in ``FAST_P`` against each baseline found in the
verdicts and against the fastest one (``best``); the geometric mean over tasks of the best correct
speedup; best-of-k curves (k = 1..n) of the trajectory's best reward and best speedup; pass@k of
correctness; the best reward reached by each turn. CPU verdicts are untimed, so everything but the
correct rate (fast_0) needs a GPU; ``results.json`` says so in ``timing_note``.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from evals.metrics import best_of_k_curve, fast_p, geomean, prob_any_correct
from hawkeye_env.edits import EditError
from hawkeye_env.judge.backends import judge_device, judge_versions, make_judge
from hawkeye_env.judge.evaluator import EvalConfig, Evaluator, evaluate_many
from hawkeye_env.judge.store import ResultStore, source_hash
from hawkeye_env.judge.verdict import Stage, Verdict
from hawkeye_env.tasks.registry import get_task, list_tasks
from policies.base import Policy
from policies.prompts import make_observation, parse_reply

#: KernelBench's thresholds: correct (0), faster than the baseline (1), 20% faster (1.2), 2x (2).
FAST_P = (0.0, 1.0, 1.2, 2.0)
CPU_TIMING_NOTE = "verdicts on cpu are untimed (Triton interpreter): speedups and fast_p for p > 0 need a GPU"


@dataclass
class Candidate:
    """One judged candidate: a row of ``candidates.jsonl``."""

    task: str
    sample: int
    turn: int
    source_hash: str
    stage: str
    reward: float
    speedup: dict[str, float]
    violations: list[str]
    compiled: bool
    correct: bool
    timed: bool
    cached: bool
    edit_error: str = ""


@dataclass
class _Trajectory:
    source: str = ""
    last_compiled: str = ""
    feedback: str = ""
    candidates: list[Candidate] = field(default_factory=list)


def as_store(store: ResultStore | str | Path | None) -> ResultStore:
    return store if isinstance(store, ResultStore) else ResultStore(store)


def _to_source(current: str, reply: str) -> tuple[str, str]:
    """(source to judge, edit error message or "")."""
    try:
        return parse_reply(current, reply), ""
    except EditError as exc:
        return reply, str(exc)


def _speedups(c: Candidate) -> dict[str, float]:
    """A correct timed candidate's usable speedups (finite, > 0; the reward's rule); else {}."""
    if not (c.correct and c.timed):
        return {}
    return {b: s for b, s in c.speedup.items() if isinstance(s, (int, float)) and math.isfinite(s) and s > 0}


def _best_speedup(c: Candidate) -> float | None:
    """Speedup over the fastest baseline, or None."""
    usable = _speedups(c)
    return min(usable.values()) if usable else None


def _speedup_entry(c: Candidate, baseline: str) -> float | None:
    """fast_p's entry: None if not correct, else the speedup over ``baseline`` (NaN when untimed)."""
    if not c.correct:
        return None
    s = _best_speedup(c) if baseline == "best" else _speedups(c).get(baseline)
    return math.nan if s is None else s


def _summarise(cands: list[Candidate], trajectories: list[list[Candidate]], turns: int) -> dict:
    """Metrics of one task (or of a pool of candidates when ``trajectories`` is empty)."""
    total = len(cands)
    baselines = sorted({b for c in cands for b in c.speedup})
    out: dict = {
        "candidates": total,
        "compile_rate": sum(c.compiled for c in cands) / total if total else 0.0,
        "correct_rate": sum(c.correct for c in cands) / total if total else 0.0,
        "violation_rate": sum(bool(c.violations) or c.stage == Stage.REJECTED.value for c in cands) / total
        if total else 0.0,
        "mean_reward": math.fsum(c.reward for c in cands) / total if total else 0.0,
        "stages": {s.value: sum(c.stage == s.value for c in cands) for s in Stage},
        "fast_p": {},
    }
    for name in baselines + (["best"] if baselines else []):
        values = [_speedup_entry(c, name) for c in cands]
        out["fast_p"][name] = {f"{p:g}": fast_p(values, p) for p in FAST_P}
    out["best_speedup"] = {
        name: max((_speedups(c)[name] for c in cands if name in _speedups(c)), default=None)
        for name in baselines
    }
    if baselines:
        out["best_speedup"]["best"] = max((s for c in cands if (s := _best_speedup(c)) is not None), default=None)
    if trajectories:
        ks = list(range(1, len(trajectories) + 1))
        best_reward = [max(c.reward for c in t) for t in trajectories]
        out["best_of_k_reward"] = best_of_k_curve(best_reward, ks)
        if any(c.timed for c in cands):
            best_speed = [max((_best_speedup(c) or 0.0 for c in t), default=0.0) for t in trajectories]
            out["best_of_k_speedup"] = best_of_k_curve(best_speed, ks)
        solved = sum(any(c.correct for c in t) for t in trajectories)
        out["pass_at_k"] = [prob_any_correct(solved, len(trajectories), k) for k in ks]
        out["best_reward_by_turn"] = [
            math.fsum(max(c.reward for c in t if c.turn <= turn) for t in trajectories) / len(trajectories)
            for turn in range(turns)
        ]
    return out


def _mean_curves(per_task: dict[str, dict], key: str) -> list[float] | None:
    curves = [m[key] for m in per_task.values() if key in m]
    if not curves or len(curves) != len(per_task):
        return None
    return [sum(c[i] for c in curves) / len(curves) for i in range(len(curves[0]))]


def summarise(by_task: dict[str, list[list[Candidate]]], turns: int) -> dict:
    """Per-task metrics and overall metrics (pooled rates, task-averaged curves, geomean speedups)."""
    per_task = {
        task: _summarise([c for t in trajs for c in t], trajs, turns) for task, trajs in by_task.items()
    }
    pooled = [c for trajs in by_task.values() for t in trajs for c in t]
    overall = _summarise(pooled, [], turns)
    for key in ("best_of_k_reward", "best_of_k_speedup", "pass_at_k", "best_reward_by_turn"):
        curve = _mean_curves(per_task, key)
        if curve is not None:
            overall[key] = curve
    names = sorted({b for m in per_task.values() for b in m["best_speedup"]})
    overall["geomean_best_speedup"] = {}
    for name in names:
        best = [m["best_speedup"].get(name) for m in per_task.values()]
        solved = [s for s in best if s is not None]
        overall["geomean_best_speedup"][name] = {
            "solved_tasks": len(solved), "tasks": len(best),
            "over_solved": geomean(solved),
            "unsolved_as_1": geomean([s if s is not None else 1.0 for s in best]),
        }
    overall.pop("best_speedup", None)
    return {"overall": overall, "tasks": per_task}


def baselines_ms(evaluator: Evaluator, task: str, device: str, versions: dict) -> dict[str, float]:
    """Stored baseline medians (ms) at the task's timed shape; empty on CPU or before any timed verdict."""
    if device != "cuda":
        return {}
    stored = evaluator.store.get_baselines(task, dict(get_task(task).gpu_shapes[0]), device, versions)
    return {name: row["median_ms"] for name, row in stored.items()}


def judge_rate(candidates: list[Candidate], judge_s: float, device: str, backend: str, gpus: int | None) -> dict:
    """What the judge did: candidates, those answered from the store, unique sources, unique sources
    judged fresh, and fresh verdicts per minute of judging (per GPU-minute on this machine's GPUs)."""
    judged = len({(c.task, c.source_hash) for c in candidates if not c.cached})
    out = {"candidates": len(candidates), "cached": sum(c.cached for c in candidates),
           "unique_sources": len({(c.task, c.source_hash) for c in candidates}), "judged": judged,
           "judged_per_minute": judged * 60 / judge_s if judge_s > 0 else None, "gpus": None,
           "judged_per_gpu_minute": None}
    if device == "cuda" and backend == "local" and out["judged_per_minute"] is not None:
        import torch

        out["gpus"] = gpus or torch.cuda.device_count()
        out["judged_per_gpu_minute"] = out["judged_per_minute"] / out["gpus"]
    return out


def _candidate(task: str, sample: int, turn: int, source: str, v: Verdict, edit_error: str) -> Candidate:
    return Candidate(
        task=task, sample=sample, turn=turn, source_hash=source_hash(source), stage=v.stage.value,
        reward=v.reward, speedup=dict(v.speedup), violations=[x.code for x in v.violations],
        compiled=v.compiled, correct=v.correct, timed=v.timed, cached=v.cached, edit_error=edit_error,
    )


def run_eval(
    policy: Policy, tasks: list[str] | None = None, n: int = 4, turns: int = 1, context: str = "docs",
    workers: int | None = None, out_dir: str | Path = "out/eval", device: str = "auto",
    store: ResultStore | str | Path | None = None, wandb_mode: str = "offline", progress: bool = True,
    config: EvalConfig | None = None, use_cache: bool = True, backend: str = "local",
    ray_address: str | None = None, gpus: int | None = None,
) -> dict:
    """Evaluate ``policy`` on ``tasks`` (default: every registered task) and write the report.

    Args:
        policy: any ``policies.base.Policy``.
        n: trajectories (samples) per task.
        turns: replies per trajectory; turn t > 0 sees the trajectory's source and feedback.
        context: unit context mode of the prompt (``none``, ``docs``, ``units``, ``full``).
        workers: candidates judged at once (default: 2 on CPU, 4 per GPU; timed sections never
            share a GPU whatever the number).
        out_dir: where results, candidates, sources, plots, report and the W&B run go.
        device: ``cpu``, ``cuda`` or ``auto``.
        store: results store (or its path); default ``$HAWKEYE_STORE`` or the user cache.
        wandb_mode: ``offline``, ``online`` or ``disabled`` (``evals/wandb_log.py``).
        progress: show rich progress bars.
        config: judge configuration (part of the store key).
        use_cache: answer repeated candidates from the store.
        backend: ``local`` (this machine's worker pool) or ``ray`` (``hawkeye_env/judge/ray_backend.py``).
        ray_address: Ray cluster address for ``backend="ray"`` (None: a local Ray).
        gpus: local backend: how many visible GPUs to judge on (default all).

    Returns the ``results.json`` dict.
    """
    start = time.monotonic()
    task_ids = list(tasks) if tasks else [s.id for s in list_tasks()]
    for task in task_ids:
        get_task(task)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    evaluator = make_judge(backend, as_store(store), config or EvalConfig(), ray_address)
    device = judge_device(evaluator, device)
    versions = judge_versions(evaluator, device, task_ids[0])
    gpu = versions["gpu"] if device == "cuda" else ""
    trajs = {(task, j): _Trajectory() for task in task_ids for j in range(n)}
    sample_s = judge_s = 0.0
    if device == "cuda" and hasattr(evaluator, "prefetch_baselines"):
        # Every task's baselines first, all GPUs in parallel: the prompts then carry their times,
        # and no task's candidates wait for its first verdict to have them measured.
        t0 = time.monotonic()
        evaluator.prefetch_baselines(task_ids, device, gpus)
        judge_s += time.monotonic() - t0
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  disable=not progress, transient=False) as bars:
        for turn in range(turns):
            keys = list(trajs)
            obs_kw = {"context": context, "turn": turn, "max_turns": turns, "device": device, "gpu": gpu}
            t0 = time.monotonic()
            if turn == 0:
                observations = [make_observation(task, baselines_ms=baselines_ms(evaluator, task, device, versions),
                                                 **obs_kw) for task in task_ids]
                sampled = policy.sample(observations, n)
                replies = {(task, j): sampled[i][j] for i, task in enumerate(task_ids) for j in range(n)}
            else:
                observations = [
                    make_observation(task, source=trajs[task, j].source, feedback=trajs[task, j].feedback,
                                     trajectory=j, last_compiled_source=trajs[task, j].last_compiled,
                                     baselines_ms=baselines_ms(evaluator, task, device, versions), **obs_kw)
                    for task, j in keys
                ]
                replies = {key: r[0] for key, r in zip(keys, policy.sample(observations, 1))}
            sample_s += time.monotonic() - t0
            converted = {key: _to_source(trajs[key].source, replies[key]) for key in keys}
            bar = bars.add_task(f"turn {turn + 1}/{turns}: judging", total=len(keys))
            t0 = time.monotonic()

            def on_verdict(i: int, v: Verdict, bar=bar, keys=keys, turn=turn) -> None:
                bars.advance(bar)
                if progress and not bars.console.is_terminal:  # a log file: one line per verdict
                    task, j = keys[i]
                    bars.console.print(f"{task} sample {j} turn {turn}: {v.stage.value}"
                                       f"{' (store)' if v.cached else ''} in {v.wall_s:.1f} s", highlight=False)

            verdicts = evaluate_many(
                evaluator, [(key[0], converted[key][0]) for key in keys], device, workers, use_cache,
                on_verdict=on_verdict, gpus=gpus,
            )
            judge_s += time.monotonic() - t0
            for key, verdict in zip(keys, verdicts):
                source, edit_error = converted[key]
                state = trajs[key]
                state.candidates.append(_candidate(key[0], key[1], turn, source, verdict, edit_error))
                _save_source(out, key[0], source)
                if not edit_error:
                    state.source = source
                    if verdict.compiled:
                        state.last_compiled = source
                prefix = f"Your reply could not be applied: {edit_error}\n\n" if edit_error else ""
                state.feedback = prefix + verdict.feedback
    by_task = {task: [trajs[task, j].candidates for j in range(n)] for task in task_ids}
    candidates = [c for trajs_ in by_task.values() for t in trajs_ for c in t]
    results = {
        "config": {
            "policy": getattr(policy, "name", type(policy).__name__), "policy_seed": getattr(policy, "seed", None),
            "tasks": task_ids, "n": n, "turns": turns,
            "context": context, "device": device, "workers": workers, "store": evaluator.store.path,
            "backend": backend, "gpus": gpus,
            "judge": evaluator.config.key(), "versions": versions,
        },
        **summarise(by_task, turns),
        "timing_note": CPU_TIMING_NOTE if not any(c.timed for c in candidates) else "",
        "judge": judge_rate(candidates, judge_s, device, backend, gpus),
        "wall_s": {"sampling": sample_s, "judging": judge_s},
    }
    with open(out / "candidates.jsonl", "w", encoding="utf-8") as f:
        for c in candidates:
            f.write(json.dumps(asdict(c), sort_keys=True) + "\n")
    results["wall_s"]["total"] = time.monotonic() - start
    from evals import report, wandb_log

    plots = report.make_plots(results, candidates, out)
    results["plots"] = [p.name for p in plots]
    results["wandb"] = wandb_log.log_run(results, candidates, plots, out, wandb_mode)
    report.write_markdown(results, out)
    (out / "results.json").write_text(json.dumps(results, indent=1, sort_keys=True, default=str), encoding="utf-8")
    return results


def _save_source(out: Path, task: str, source: str) -> None:
    path = out / "sources" / task / f"{source_hash(source)[:16]}.py"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source, encoding="utf-8")


__all__ = ["FAST_P", "Candidate", "as_store", "run_eval", "summarise"]
