"""Best-of-N and multi-turn evaluation of a policy: sample, judge, score, report.

    hawkeye eval --policy search                       # the CLI front end (hawkeye_env/cli.py)
    python -c "from evals.best_of_n import run_eval; from policies import make_policy; \
               run_eval(make_policy('search'), ['vector_add_fp32'], n=3, out_dir='out/eval')"

Every trajectory is an episode of ``hawkeye/KernelOpt-v2`` (``KernelOptEnv``, ``max_turns=turns``):
the policy reads the env's observation, so an evaluated policy sees exactly the prompt and the
turn format it sees in the env, the served env and training. For every task the policy samples
``n`` replies at turn 0 (``n`` trajectories), then one reply per trajectory and turn; the env turns
each into candidate source (``KernelOptEnv.prepare_step``), the candidates of a turn are judged
together by ``evaluate_many`` (``workers`` worker processes at once), and ``finish_step`` gives the
trajectory its next observation (current source, the judge's feedback, the reply format). A reply
that yields no source gets the env's ``no_source`` verdict (nothing runs). Episodes run all
``turns`` (the target speedup is infinite), so later turns can still speed up a correct kernel.

Policy failures are loud: a reply the policy reports as failed (``policy.errors``, e.g. the
OpenAI-compatible client after its retries) is not judged; its candidate row has stage
``policy_error`` and the error, ``results.json`` lists every failure under ``policy_errors``, and
``hawkeye eval`` exits 1. A policy that keeps raw replies (``policy.raw``) has them written to
``raw_replies.jsonl``.

Resumable: every verdict is cached in the results store under its source hash, so re-running an
eval (same policy, seed and store) judges nothing again.

Outputs under ``out_dir``: ``results.json`` (config, overall and per-task metrics),
``candidates.jsonl`` (one row per candidate), ``sources/<task>/<hash>.py``, ``raw_replies.jsonl`` (when
the policy keeps them), the plots and
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
from hawkeye_env.env import KernelOptEnv
from hawkeye_env.judge.backends import judge_device, judge_versions, make_judge
from hawkeye_env.judge.evaluator import EvalConfig, Evaluator, evaluate_many
from hawkeye_env.judge.store import ResultStore, source_hash
from hawkeye_env.judge.verdict import Stage, Verdict
from hawkeye_env.observation import CONTEXT_BUDGET_CHARS
from hawkeye_env.tasks.registry import get_task, list_tasks
from policies.base import Policy

#: KernelBench's thresholds: correct (0), faster than the baseline (1), 20% faster (1.2), 2x (2).
FAST_P = (0.0, 1.0, 1.2, 2.0)
CPU_TIMING_NOTE = "verdicts on cpu are untimed (Triton interpreter): speedups and fast_p for p > 0 need a GPU"
#: Stage of a candidate whose reply the policy never produced (not judged, not a model's ``no_source``).
POLICY_ERROR = "policy_error"


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
    policy_error: str = ""


@dataclass
class _Trajectory:
    env: KernelOptEnv
    obs: dict
    candidates: list[Candidate] = field(default_factory=list)


def as_store(store: ResultStore | str | Path | None) -> ResultStore:
    return store if isinstance(store, ResultStore) else ResultStore(store)


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
    sourced = [c for c in candidates if c.stage != POLICY_ERROR]
    judged = len({(c.task, c.source_hash) for c in sourced if not c.cached})
    out = {"candidates": len(candidates), "cached": sum(c.cached for c in candidates),
           "unique_sources": len({(c.task, c.source_hash) for c in sourced}), "judged": judged,
           "judged_per_minute": judged * 60 / judge_s if judge_s > 0 else None, "gpus": None,
           "judged_per_gpu_minute": None}
    if device == "cuda" and backend == "local" and out["judged_per_minute"] is not None:
        import torch

        out["gpus"] = gpus or torch.cuda.device_count()
        out["judged_per_gpu_minute"] = out["judged_per_minute"] / out["gpus"]
    return out


def _candidate(task: str, sample: int, turn: int, source: str, v: Verdict) -> Candidate:
    edit_error = v.error if v.stage == Stage.NO_SOURCE else ""
    return Candidate(
        task=task, sample=sample, turn=turn, source_hash=source_hash(source), stage=v.stage.value,
        reward=v.reward, speedup=dict(v.speedup), violations=[x.code for x in v.violations],
        compiled=v.compiled, correct=v.correct, timed=v.timed, cached=v.cached, edit_error=edit_error,
    )


def _policy_failures(policy: Policy, seen: int, turn: int) -> tuple[dict[tuple[str, int], int], list[dict]]:
    """The policy's error records after the first ``seen``: ``{(task, trajectory): missing samples}``
    for ``turn`` and the new records."""
    records = list(getattr(policy, "errors", None) or [])[seen:]
    failed: dict[tuple[str, int], int] = {}
    for r in records:
        if isinstance(r, dict) and r.get("turn", turn) == turn:
            key = (r.get("task_id"), int(r.get("trajectory", 0)))
            failed[key] = failed.get(key, 0) + int(r.get("missing", 1))
    return failed, records


def _policy_observation(traj: _Trajectory, task: str, j: int, context: str) -> dict:
    """The env's observation as ``policies/base.py`` reads it."""
    obs = dict(traj.obs, task_id=task, trajectory=j, context=context, turn=int(traj.obs["turn"]))
    obs["last_compiled_source"] = obs["source"]  # the env keeps only sources that compiled
    return obs


def run_eval(
    policy: Policy, tasks: list[str] | None = None, n: int = 4, turns: int = 1, context: str = "docs",
    workers: int | None = None, out_dir: str | Path = "out/eval", device: str = "auto",
    store: ResultStore | str | Path | None = None, wandb_mode: str | None = None, progress: bool = True,
    config: EvalConfig | None = None, use_cache: bool = True, backend: str = "local",
    ray_address: str | None = None, gpus: int | None = None, context_budget_chars: int = CONTEXT_BUDGET_CHARS,
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
        wandb_mode: ``offline``, ``online``, ``disabled`` or None (W&B's own configuration decides;
            ``evals/wandb_log.resolve_mode``).
        progress: show rich progress bars.
        config: judge configuration (part of the store key).
        use_cache: answer repeated candidates from the store.
        backend: ``local`` (this machine's worker pool) or ``ray`` (``hawkeye_env/judge/ray_backend.py``).
        ray_address: Ray cluster address for ``backend="ray"`` (None: a local Ray).
        gpus: local backend: how many visible GPUs to judge on (default all).
        context_budget_chars: unit context budget (the env's default).

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
    trajs = {}
    for task in task_ids:
        for j in range(n):
            env = KernelOptEnv(tasks=[task], evaluator=evaluator, device=device, context=context,
                               context_budget_chars=context_budget_chars, max_turns=turns,
                               target_speedup=math.inf)
            trajs[task, j] = _Trajectory(env, env.reset(options={"task": task})[0])
    sample_s = judge_s = 0.0
    policy_errors: list[dict] = []
    if device == "cuda" and hasattr(evaluator, "prefetch_baselines"):
        # Every task's baselines first, all GPUs in parallel, so no task's candidates wait for them.
        t0 = time.monotonic()
        evaluator.prefetch_baselines(task_ids, device, gpus)
        judge_s += time.monotonic() - t0
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  disable=not progress, transient=False) as bars:
        for turn in range(turns):
            keys = list(trajs)
            t0 = time.monotonic()
            if turn == 0:
                observations = [_policy_observation(trajs[task, 0], task, 0, context) for task in task_ids]
                sampled = policy.sample(observations, n)
                replies = {(task, j): sampled[i][j] for i, task in enumerate(task_ids) for j in range(n)}
            else:
                observations = [_policy_observation(trajs[key], *key, context) for key in keys]
                replies = {key: r[0] for key, r in zip(keys, policy.sample(observations, 1))}
            sample_s += time.monotonic() - t0
            failed, records = _policy_failures(policy, len(policy_errors), turn)
            policy_errors += records
            lost = {key for key in keys if replies[key] == "" and _lost(failed, key, turn, n)}
            prepared = {key: trajs[key].env.prepare_step(replies[key]) for key in keys if key not in lost}
            batch = [key for key, (_, verdict) in prepared.items() if verdict is None]
            bar = bars.add_task(f"turn {turn + 1}/{turns}: judging", total=len(batch))
            t0 = time.monotonic()

            def on_verdict(i: int, v: Verdict, bar=bar, batch=batch, turn=turn) -> None:
                bars.advance(bar)
                if progress and not bars.console.is_terminal:  # a log file: one line per verdict
                    task, j = batch[i]
                    bars.console.print(f"{task} sample {j} turn {turn}: {v.stage.value}"
                                       f"{' (store)' if v.cached else ''} in {v.wall_s:.1f} s", highlight=False)

            verdicts = evaluate_many(
                evaluator, [(key[0], prepared[key][0]) for key in batch], device, workers, use_cache,
                on_verdict=on_verdict, gpus=gpus,
            ) if batch else []
            judge_s += time.monotonic() - t0
            judged = dict(zip(batch, verdicts))
            for key in keys:
                state = trajs[key]
                if key in lost:
                    why = next((r["error"] for r in records if r.get("task_id") == key[0]
                                and (turn == 0 or r.get("trajectory", 0) == key[1])), "the policy reported a failure")
                    state.candidates.append(Candidate(
                        task=key[0], sample=key[1], turn=turn, source_hash="", stage=POLICY_ERROR, reward=-1.0,
                        speedup={}, violations=[], compiled=False, correct=False, timed=False, cached=False,
                        policy_error=why))
                    continue
                source, verdict = prepared[key]
                verdict = verdict or judged[key]
                state.obs = state.env.finish_step(source, verdict)[0]
                state.candidates.append(_candidate(key[0], key[1], turn, source, verdict))
                if source:
                    _save_source(out, key[0], source)
    by_task = {task: [trajs[task, j].candidates for j in range(n)] for task in task_ids}
    candidates = [c for trajs_ in by_task.values() for t in trajs_ for c in t]
    results = {
        "config": {
            "policy": getattr(policy, "name", type(policy).__name__), "policy_seed": getattr(policy, "seed", None),
            "tasks": task_ids, "n": n, "turns": turns,
            "context": context, "context_budget_chars": context_budget_chars, "device": device, "workers": workers,
            "store": evaluator.store.path,
            "backend": backend, "gpus": gpus,
            "judge": evaluator.config.key(), "versions": versions,
        },
        **summarise(by_task, turns),
        "timing_note": CPU_TIMING_NOTE if not any(c.timed for c in candidates) else "",
        "policy_errors": policy_errors,
        "error": (f"the policy failed {len(policy_errors)} time(s); first: {policy_errors[0].get('error')}"
                  if policy_errors else ""),
        "judge": judge_rate(candidates, judge_s, device, backend, gpus),
        "wall_s": {"sampling": sample_s, "judging": judge_s},
    }
    with open(out / "candidates.jsonl", "w", encoding="utf-8") as f:
        for c in candidates:
            f.write(json.dumps(asdict(c), sort_keys=True) + "\n")
    raw = getattr(policy, "raw", None)
    if raw:
        with open(out / "raw_replies.jsonl", "w", encoding="utf-8") as f:
            for row in raw:
                f.write(json.dumps(row, sort_keys=True, default=str) + "\n")
    for traj in trajs.values():
        traj.env.close()
    results["wall_s"]["total"] = time.monotonic() - start
    from evals import report, wandb_log

    plots = report.make_plots(results, candidates, out)
    results["plots"] = [p.name for p in plots]
    results["wandb"] = wandb_log.log_run(results, candidates, plots, out, wandb_mode)
    report.write_markdown(results, out)
    (out / "results.json").write_text(json.dumps(results, indent=1, sort_keys=True, default=str), encoding="utf-8")
    return results


def _lost(failed: dict[tuple[str, int], int], key: tuple[str, int], turn: int, n: int) -> bool:
    """Whether the empty reply at ``key`` is one the policy failed to produce: at turn 0 one
    observation stands for the task's ``n`` samples, of which the last ``missing`` were lost."""
    if turn > 0:
        return key in failed
    missing = failed.get((key[0], 0), 0)
    return key[1] >= n - missing


def _save_source(out: Path, task: str, source: str) -> None:
    path = out / "sources" / task / f"{source_hash(source)[:16]}.py"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source, encoding="utf-8")


__all__ = ["FAST_P", "POLICY_ERROR", "Candidate", "as_store", "run_eval", "summarise"]
