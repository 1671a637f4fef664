"""Judged candidates of a best-of-N evaluation (rows of ``candidates.jsonl``) and their metrics."""

from __future__ import annotations

import math
from dataclasses import dataclass

from evals.metrics import best_of_k_curve, fast_p, geomean, prob_any_correct
from hawkeye_env.judge.verdict import Stage

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


__all__ = ["CPU_TIMING_NOTE", "FAST_P", "POLICY_ERROR", "Candidate", "judge_rate", "summarise"]
