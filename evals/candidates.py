"""Judged candidates of a best-of-N evaluation (rows of ``candidates.jsonl``) and their metrics."""

from __future__ import annotations

import math
from dataclasses import dataclass

from evals.metrics import best_of_k_curve, fast_p, geomean, prob_any_correct
from hawkeye_env.judge.shared.verdict import Stage

#: KernelBench's thresholds: correct (0), faster than the baseline (1), 20% faster (1.2), 2x (2).
FAST_P = (0.0, 1.0, 1.2, 2.0)
CPU_TIMING_NOTE = "verdicts on cpu are untimed (Triton interpreter): speedups and fast_p for p > 0 need a GPU"
#: Stage of a candidate whose reply the policy never produced (not judged, not a model's ``no_source``).
POLICY_ERROR = "policy_error"


@dataclass
class Candidate:
    """One candidate: a row of ``candidates.jsonl``. A reply the policy failed to produce is a row
    with stage ``POLICY_ERROR``, its error in ``policy_error`` and no reward (None): nothing was
    judged, and no metric counts it as the model's."""

    task: str
    sample: int
    turn: int
    source_hash: str
    stage: str
    reward: float | None
    speedup: dict[str, float]
    violations: list[str]
    compiled: bool
    correct: bool
    timed: bool
    cached: bool
    edit_error: str = ""
    policy_error: str = ""


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


def _rate(hits: int, total: int) -> float | None:
    """``hits / total``, None when nothing was obtained (no rate is not a rate of 0)."""
    return hits / total if total else None


def _curves(trajectories: list[list[Candidate]], turns: int) -> dict:
    """Best-of-k reward (and speedup when timed) and pass@k over ``trajectories`` (each holding
    its obtained candidates, at least one), k = 1..their number, and the mean best reward reached
    by each turn over the trajectories with a candidate by then (None for a turn with none)."""
    ks = list(range(1, len(trajectories) + 1))
    out = {"best_of_k_reward": best_of_k_curve([max(c.reward for c in t) for t in trajectories], ks)}
    if any(c.timed for t in trajectories for c in t):
        best_speed = [max((_best_speedup(c) or 0.0 for c in t), default=0.0) for t in trajectories]
        out["best_of_k_speedup"] = best_of_k_curve(best_speed, ks)
    solved = sum(any(c.correct for c in t) for t in trajectories)
    out["pass_at_k"] = [prob_any_correct(solved, len(trajectories), k) for k in ks]
    out["best_reward_by_turn"] = []
    for turn in range(turns):
        reached = [max(c.reward for c in t if c.turn <= turn) for t in trajectories if t[0].turn <= turn]
        out["best_reward_by_turn"].append(math.fsum(reached) / len(reached) if reached else None)
    return out


def _summarise(rows: list[Candidate], trajectories: list[list[Candidate]], turns: int) -> dict:
    """Metrics of one task (or of a pool of candidates when ``trajectories`` is empty). Rows the
    policy failed to produce (``POLICY_ERROR``) are counted in ``policy_failures`` and nowhere
    else: every rate, reward and curve is over the obtained candidates (None or absent when there
    are none), and the curves over the trajectories with at least one."""
    cands = [c for c in rows if c.stage != POLICY_ERROR]
    total = len(cands)
    baselines = sorted({b for c in cands for b in c.speedup})
    out: dict = {
        "candidates": len(rows),
        "obtained": total,
        "policy_failures": len(rows) - total,
        "compile_rate": _rate(sum(c.compiled for c in cands), total),
        "correct_rate": _rate(sum(c.correct for c in cands), total),
        "violation_rate": _rate(sum(bool(c.violations) or c.stage == Stage.REJECTED.value for c in cands), total),
        "mean_reward": math.fsum(c.reward for c in cands) / total if total else None,
        "stages": {**{s.value: sum(c.stage == s.value for c in cands) for s in Stage}, POLICY_ERROR: len(rows) - total},
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
    obtained = [kept for t in trajectories if (kept := [c for c in t if c.stage != POLICY_ERROR])]
    if trajectories:
        out["trajectories"] = len(obtained)
    if obtained:
        out.update(_curves(obtained, turns))
    return out


def _mean_curves(per_task: dict[str, dict], key: str) -> list[float | None] | None:
    """The task mean of a curve, over the tasks that have it, up to the shortest (a task whose
    policy failed for some trajectories has a shorter one); entries that are None are left out."""
    curves = [m[key] for m in per_task.values() if m.get(key)]
    if not curves:
        return None
    out = []
    for i in range(min(len(c) for c in curves)):
        values = [c[i] for c in curves if c[i] is not None]
        out.append(sum(values) / len(values) if values else None)
    return out


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
    overall["tasks_without_samples"] = [task for task, m in per_task.items() if not m["obtained"]]
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


def per_minute(count: int, seconds: float) -> float | None:
    """``count`` per minute of ``seconds``; None when nothing was counted or no time passed (a
    rate of nothing is no rate: 0 sources in 0.01 s are not 0 per minute, nor 5244.8)."""
    return count * 60 / seconds if count and seconds > 0 else None


def judge_rate(candidates: list[Candidate], judge_s: float, device: str, backend: str, gpus: int | None) -> dict:
    """What the judge did: candidates, those answered from the store, those the policy failed to
    produce, unique sources, unique sources judged fresh (a reply with no source is decided
    without the judge, a failed one never reaches it), and fresh verdicts per minute of judging
    (per GPU-minute on this machine's GPUs); the rates are None when nothing was judged fresh."""
    sourced = [c for c in candidates if c.stage not in (POLICY_ERROR, Stage.NO_SOURCE.value)]
    judged = len({(c.task, c.source_hash) for c in sourced if not c.cached})
    out = {"candidates": len(candidates), "cached": sum(c.cached for c in candidates),
           "policy_failures": sum(c.stage == POLICY_ERROR for c in candidates),
           "unique_sources": len({(c.task, c.source_hash) for c in sourced}), "judged": judged,
           "judged_per_minute": per_minute(judged, judge_s), "gpus": None, "judged_per_gpu_minute": None}
    if device == "cuda" and backend == "local" and out["judged_per_minute"] is not None:
        import torch

        out["gpus"] = gpus or torch.cuda.device_count()
        out["judged_per_gpu_minute"] = out["judged_per_minute"] / out["gpus"]
    return out


__all__ = ["CPU_TIMING_NOTE", "FAST_P", "POLICY_ERROR", "Candidate", "judge_rate", "per_minute", "summarise"]
