"""What every adapter shares: one judge per process, episodes of the env, and one-reply scoring.

An adapter (verifiers, SkyRL-gym, veRL) is a thin layer over ``KernelOptEnv`` and the one
evaluator: prompts are the env's observation, rewards are the env's step rewards, and verdicts come
from a process-wide ``JudgeQueue`` (``shared_judge``), so concurrent rollouts of a trainer are
judged in ``evaluate_many`` batches. Profiles come from the env's one profile function
(``profile_action.profile_feedback``): through the env's ``PROFILE`` action in an episode
(``new_episode(..., allow_profile=True)``), or for a stack whose tool takes the source itself
(veRL's), through ``profile_reply``. ``$HAWKEYE_STORE`` names the results store (the evaluator's
default when unset) and ``$HAWKEYE_JUDGE_DEVICE`` the device (``auto``). Every adapter names its
tasks as the env does (``task_prompts``: ids or ``split:NAME`` through ``tasks/selection.py``). Example::

    from hawkeye_env.adapters.common import score_reply
    reward, verdict = score_reply("vector_add_fp32", "```python\\n...```")
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator, Sequence

from hawkeye_env.edits import EditError, extract_source
from hawkeye_env.env import KernelOptEnv
from hawkeye_env.judge.parent.evaluator import Evaluator
from hawkeye_env.judge.parent.store import ResultStore
from hawkeye_env.profile_action import profile_feedback
from hawkeye_env.server.judge_queue import JudgeQueue
from hawkeye_env.tasks.selection import select_tasks

DEVICE_ENV = "HAWKEYE_JUDGE_DEVICE"
_QUEUES: dict[tuple, JudgeQueue] = {}
_LOCK = threading.Lock()


def shared_judge(store: str | None = None, device: str | None = None, workers: int | None = None) -> JudgeQueue:
    """The process's ``JudgeQueue`` for ``(store, device, workers)``, built on first use.

    ``store`` defaults to ``$HAWKEYE_STORE`` (the evaluator's own default), ``device`` to
    ``$HAWKEYE_JUDGE_DEVICE`` or ``auto``."""
    device = device or os.environ.get(DEVICE_ENV, "auto")
    key = (store, device, workers)
    with _LOCK:
        if key not in _QUEUES:
            _QUEUES[key] = JudgeQueue(Evaluator(ResultStore(store)), device, workers)
        return _QUEUES[key]


def new_episode(task_id: str, judge: JudgeQueue, **env_kwargs) -> tuple[KernelOptEnv, dict]:
    """A ``KernelOptEnv`` on ``judge``'s evaluator, reset on ``task_id``; returns ``(env, obs)``."""
    env = KernelOptEnv(tasks=[task_id], evaluator=judge.evaluator, device=judge.device, **env_kwargs)
    obs, _ = env.reset(options={"task": task_id})
    return env, obs


def task_prompts(tasks: str | Sequence[str] | None, judge: JudgeQueue, **env_kwargs) -> Iterator[tuple[str, list]]:
    """``(task id, the env's first messages)`` for each task ``tasks`` selects, in order: ids or
    ``split:NAME`` (``select_tasks``; None: every task). ``KeyError`` for an unknown id or split,
    raised before any episode starts; ``env_kwargs`` go to ``new_episode``."""
    for task_id in select_tasks(tasks):
        env, obs = new_episode(task_id, judge, **env_kwargs)
        env.close()
        yield task_id, json.loads(obs["messages"])


def judged_step(env: KernelOptEnv, judge: JudgeQueue, reply: str):
    """``env.step(reply)`` with the verdict from ``judge``: ``(obs, reward, terminated, truncated, info)``."""
    candidate, verdict = env.prepare_step(reply)
    if verdict is None:
        verdict = judge.judge(env.task_id, candidate)
    return env.finish_step(candidate, verdict)


def score_reply(task_id: str, reply: str, judge: JudgeQueue | None = None) -> tuple[float, dict]:
    """The env's first-turn reward of ``reply`` on ``task_id`` and its verdict dict."""
    judge = judge or shared_judge()
    env, _ = new_episode(task_id, judge, context="none", max_turns=1)
    _, reward, _, _, info = judged_step(env, judge, reply)
    return float(reward), info["verdict"]


def profile_reply(task_id: str, reply: str, judge: JudgeQueue | None = None) -> tuple[str, dict]:
    """``(text, report)``: the profile of ``reply``'s module (fenced or bare, as the env reads a first
    reply) on ``task_id`` beside the expert's (``profile_action.profile_feedback``; ``report`` is
    ``{}`` when nothing was profiled). A reply without a module, an unknown task or a source that
    does not build is a line saying so, never an error."""
    judge = judge or shared_judge()
    if not isinstance(task_id, str) or not isinstance(reply, str):
        return "Nothing to profile: the task id and the source must be text.", {}
    try:
        source = extract_source(reply)
    except EditError as exc:
        return f"Nothing to profile: {exc}", {}
    return profile_feedback(judge.evaluator, task_id, source, judge.device)


__all__ = ["DEVICE_ENV", "judged_step", "new_episode", "profile_reply", "score_reply", "shared_judge", "task_prompts"]
