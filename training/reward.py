"""The GRPO reward: the one evaluator's ``verdict.reward`` for each completion.

``make_reward_func`` returns a TRL reward function (``reward(prompts, completions, task, **kw)``).
Each completion is turned into source with ``hawkeye_env.edits.to_candidate`` (as the env does on its
first turn), the batch is judged with ``evaluate_many`` (every candidate in its own sandboxed worker
process; no candidate code runs in the trainer's process) and the reward is ``verdict.reward``
(reward v3). A completion with no usable source gets the env's ``no_source`` reward without running
anything. The verdict breakdown of each batch is logged through TRL's ``log_metric`` and kept in
``reward_func.stats``, and each completion is appended to ``rollouts.jsonl``.
``make_episode_reward_func`` is the multi-turn form: the reward and verdict of each rollout's
episode (``training.tool_env``), counted, logged and kept the same way. Example::

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
from hawkeye_env.judge.parent.decide.finish import no_source_verdict
from hawkeye_env.judge.parent.evaluator import Evaluator, evaluate_many, resolve_device
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


def _append_rollouts(path: str | os.PathLike, step: int, rows: list[dict]) -> None:
    with open(path, "a", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps({"step": step, **row}, default=str) + "\n")


def _record(stats: RewardStats, verdicts: list[Verdict], rewards: list[float], rows: list[dict], log_metric,
            rollouts_path, trainer_state) -> None:
    """Count a batch's verdicts into ``stats``, log its breakdown through TRL's ``log_metric`` and
    append one rollout per ``rows`` entry (with its stage, reward and verdict) to ``rollouts_path``;
    the step is the trainer's optimizer step (``trainer_state.global_step``), else the call's index."""
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
        step = trainer_state.global_step if trainer_state is not None else stats.calls - 1
        _append_rollouts(rollouts_path, step, [{**row, "stage": v.stage.value, "reward": reward, "verdict": v.to_dict()}
                                               for row, v, reward in zip(rows, verdicts, rewards)])


def _rows(prompts, completions, task, split) -> list[dict]:
    """The rollout fields of a batch: task, split (``train`` unless the dataset names one), prompt, completion."""
    split = split or ["train"] * len(completions)
    return [{"task": t, "split": s, "prompt": p, "completion": completion_text(c)}
            for p, c, t, s in zip(prompts, completions, task, split)]


def make_reward_func(evaluator: Evaluator, device: str = "auto", workers: int = 2,
                     rollouts_path: str | os.PathLike | None = None) -> Callable[..., list[float]]:
    """A TRL reward function judging each completion on its row's ``task`` with ``evaluator``.

    Returns ``reward_func(prompts, completions, task, log_metric=None, **kwargs) -> list[float]``;
    ``reward_func.stats`` (``RewardStats``) accumulates the verdict breakdown across calls. With
    ``rollouts_path`` every call appends one JSON line per completion (``step``, ``task``,
    ``split``, ``prompt``, ``completion``, ``stage``, ``reward``, ``verdict``).
    """
    device = resolve_device(device)
    stats = RewardStats()

    def hawkeye_reward(prompts, completions, task, log_metric=None, trainer_state=None, split=None,
                       **kwargs) -> list[float]:
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
        rewards = [float(v.reward) for v in verdicts]
        _record(stats, verdicts, rewards, _rows(prompts, completions, task, split), log_metric, rollouts_path,
                trainer_state)
        return rewards

    hawkeye_reward.stats = stats
    return hawkeye_reward


def make_episode_reward_func(rollouts_path: str | os.PathLike | None = None) -> Callable[..., list[float]]:
    """The multi-turn reward: each rollout's ``KernelOptToolEnv`` (TRL passes them as
    ``environments``) gives its reward (the env's reward of the last submission) and verdict, and
    the batch is counted, logged and kept exactly as ``make_reward_func`` does, each rollout row
    also carrying the tool's ``submissions`` and their ``turn_rewards``."""
    stats = RewardStats()

    def hawkeye_episode_reward(prompts, completions, environments, task=None, log_metric=None, trainer_state=None,
                               split=None, **kwargs) -> list[float]:
        verdicts = [env.verdict for env in environments]
        rewards = [float(env.reward) for env in environments]
        rows = [{**row, "submissions": list(env.submissions), "turn_rewards": list(env.rewards)}
                for row, env in zip(_rows(prompts, completions, task or [v.task for v in verdicts], split),
                                    environments)]
        _record(stats, verdicts, rewards, rows, log_metric, rollouts_path, trainer_state)
        return rewards

    hawkeye_episode_reward.stats = stats
    return hawkeye_episode_reward


__all__ = ["RewardStats", "breakdown", "completion_text", "make_episode_reward_func", "make_reward_func",
           "no_source_verdict"]
