"""The GRPO reward: the one evaluator's ``verdict.reward`` for each completion.

``make_reward_func`` returns a TRL reward function (``reward(prompts, completions, task, **kw)``).
Each completion is turned into source with ``hawkeye_env.edits.to_candidate`` (as the env does on its
first turn), the batch is judged with ``evaluate_many`` (every candidate in its own sandboxed worker
process; no candidate code runs in the trainer's process) and the reward is ``verdict.reward``
(reward v3). A completion with no usable source gets the env's ``no_source`` reward without running
anything. The verdict breakdown of each batch is logged through TRL's ``log_metric`` and kept in
``reward_func.stats``. Example::

    reward_func = make_reward_func(Evaluator(ResultStore(":memory:")), device="cpu", workers=2)
    reward_func(prompts=[p], completions=["```python\\n...```"], task=["vector_add_fp32"])  # [0.2]
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable
from dataclasses import dataclass, field

from hawkeye_env.edits import EditError, to_candidate
from hawkeye_env.judge.parent.evaluator import Evaluator, evaluate_many, resolve_device
from hawkeye_env.judge.parent.decide.finish import no_source_verdict
from hawkeye_env.judge.shared.verdict import Stage, Verdict


@dataclass
class RewardStats:
    """Running counts over every completion judged by one reward function."""

    calls: int = 0
    completions: int = 0
    no_source: int = 0
    compiled: int = 0
    correct: int = 0
    violations: int = 0
    timed: int = 0
    speedups: list[float] = field(default_factory=list)
    last_batch: dict[str, float] = field(default_factory=dict)


def completion_text(completion) -> str:
    """The assistant text of a TRL completion: a string, or a list of chat messages."""
    if isinstance(completion, str):
        return completion
    return "\n".join(m.get("content") or "" for m in completion if m.get("role") == "assistant")


def breakdown(verdicts: list[Verdict]) -> dict[str, float]:
    """Rates of a batch of verdicts: compiled, correct, violation, no source, timed; mean timed speedup."""
    n = max(1, len(verdicts))
    speedups = [v.best_speedup for v in verdicts if v.correct and v.timed and v.best_speedup is not None
                and math.isfinite(v.best_speedup)]
    out = {
        "judge/compile_rate": sum(v.compiled for v in verdicts) / n,
        "judge/correct_rate": sum(v.correct for v in verdicts) / n,
        "judge/violation_rate": sum(bool(v.violations) or v.stage == Stage.REJECTED for v in verdicts) / n,
        "judge/no_source_rate": sum(v.stage == Stage.NO_SOURCE for v in verdicts) / n,
        "judge/timed_rate": sum(v.timed for v in verdicts) / n,
    }
    if speedups:
        out["judge/mean_speedup"] = sum(speedups) / len(speedups)
    return out


def _append_rollouts(path: str | os.PathLike, step: int, prompts, completions, task, verdicts: list[Verdict]) -> None:
    with open(path, "a", encoding="utf-8") as f:
        for prompt, completion, task_id, v in zip(prompts, completions, task, verdicts):
            f.write(json.dumps({"step": step, "task": task_id, "prompt": prompt,
                                "completion": completion_text(completion), "stage": v.stage.value,
                                "reward": float(v.reward), "verdict": v.to_dict()},
                               default=str) + "\n")


def make_reward_func(evaluator: Evaluator, device: str = "auto", workers: int = 2,
                     rollouts_path: str | os.PathLike | None = None) -> Callable[..., list[float]]:
    """A TRL reward function judging each completion on its row's ``task`` with ``evaluator``.

    Returns ``reward_func(prompts, completions, task, log_metric=None, **kwargs) -> list[float]``;
    ``reward_func.stats`` (``RewardStats``) accumulates the verdict breakdown across calls. With
    ``rollouts_path`` every call appends one JSON line per completion (``step`` the call's index,
    ``task``, ``prompt``, ``completion``, ``stage``, ``reward``, ``verdict``).
    """
    device = resolve_device(device)
    stats = RewardStats()

    def hawkeye_reward(prompts, completions, task, log_metric=None, **kwargs) -> list[float]:
        verdicts: list[Verdict | None] = [None] * len(completions)
        jobs, where = [], []
        for i, (task_id, completion) in enumerate(zip(task, completions)):
            try:
                source = to_candidate(None, completion_text(completion))
                if "\x00" in source:
                    raise EditError("the source contains NUL characters (\\x00)")
            except (EditError, ValueError, RecursionError) as exc:
                verdicts[i] = no_source_verdict(task_id, device, str(exc))
            else:
                jobs.append((task_id, source))
                where.append(i)
        for i, verdict in zip(where, evaluate_many(evaluator, jobs, device=device, workers=workers)):
            verdicts[i] = verdict
        batch = breakdown(verdicts)
        stats.calls += 1
        stats.completions += len(verdicts)
        stats.no_source += sum(v.stage == Stage.NO_SOURCE for v in verdicts)
        stats.compiled += sum(v.compiled for v in verdicts)
        stats.correct += sum(v.correct for v in verdicts)
        stats.violations += sum(bool(v.violations) or v.stage == Stage.REJECTED for v in verdicts)
        stats.timed += sum(v.timed for v in verdicts)
        if "judge/mean_speedup" in batch:
            stats.speedups.append(batch["judge/mean_speedup"])
        stats.last_batch = batch
        if log_metric is not None:
            for name, value in batch.items():
                log_metric(name, value)
        if rollouts_path is not None:
            _append_rollouts(rollouts_path, stats.calls - 1, prompts, completions, task, verdicts)
        return [float(v.reward) for v in verdicts]

    hawkeye_reward.stats = stats
    return hawkeye_reward


__all__ = ["RewardStats", "breakdown", "completion_text", "make_reward_func", "no_source_verdict"]
