"""``HawkeyeEnvironment``: one OpenEnv session's episode of ``hawkeye/KernelOpt-v3``.

Each WebSocket session of the server gets its own instance (its own ``KernelOptEnv``: task, source,
turn, best speedup), and every instance judges through the one ``JudgeQueue`` of the server, so
the evaluator, its results store and its GPU lanes are shared. A step is ``KernelOptEnv``'s own
two halves (``prepare_step``, ``finish_step``) with the verdict from the queue in between, so a
served step gives the same reward, feedback and episode end as ``env.step``.

Stateless HTTP (OpenEnv's ``POST /reset`` and ``POST /step`` build a fresh instance per request):
``/step`` with ``{"action": {"reply": ..., "task": "vector_add_fp32"}}`` judges one single-turn
reply on that task; multi-turn episodes use the WebSocket session (``HawkeyeEnvClient``). Bad
requests (unknown task or reset option, a step before reset or after the end) raise
``BadRequest``, which the server answers as an error message (WebSocket) or HTTP 400.
"""

from __future__ import annotations

import json
import uuid

from hawkeye_env.env import KernelOptEnv
from hawkeye_env.server import require_openenv
from hawkeye_env.server.judge_queue import JudgeQueue

require_openenv()

from openenv.core.env_server.interfaces import Environment  # noqa: E402
from openenv.core.env_server.types import EnvironmentMetadata  # noqa: E402

from hawkeye_env.server.models import KernelAction, KernelObservation, KernelState  # noqa: E402

RESET_OPTIONS = ("task", "source")


class BadRequest(ValueError):
    """A request the env cannot serve; its message says why and what to send instead."""


class HawkeyeEnvironment(Environment[KernelAction, KernelObservation, KernelState]):
    """OpenEnv ``Environment`` over one ``KernelOptEnv`` judged through a shared ``JudgeQueue``.

    Args:
        queue: the server's ``JudgeQueue`` (its evaluator and device are the env's).
        **env_kwargs: ``KernelOptEnv`` arguments (``tasks``, ``context``, ``context_budget_chars``,
            ``max_turns``, ``target_speedup``, ``max_text_chars``).
    """

    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self, queue: JudgeQueue, **env_kwargs):
        super().__init__()
        self.queue = queue
        self.env = KernelOptEnv(evaluator=queue.evaluator, device=queue.device, **env_kwargs)
        self._state = KernelState()
        self._started = False

    def reset(self, seed: int | None = None, episode_id: str | None = None, task: str | None = None,
              source: str | None = None, **unknown) -> KernelObservation:
        """Start an episode: ``task`` picks the task (else drawn with ``seed``), ``source`` starts from it."""
        if unknown:
            raise BadRequest(f"unknown reset fields {sorted(unknown)}; known: seed, episode_id, "
                             f"{', '.join(RESET_OPTIONS)}")
        if task is not None and task not in self.env.tasks:
            raise BadRequest(f"unknown task {task!r} for this server; it serves: {', '.join(self.env.tasks)}")
        if source is not None and not isinstance(source, str):
            raise BadRequest("source must be a string")
        options = {k: v for k, v in (("task", task), ("source", source)) if v is not None}
        obs, info = self.env.reset(seed=seed, options=options)
        self._state = KernelState(episode_id=episode_id or str(uuid.uuid4()), step_count=0, task_id=info["task"])
        self._started = True
        return self._observation(obs, reward=None, done=False, terminated=False, truncated=False, verdict=None)

    def step(self, action: KernelAction, timeout_s: float | None = None, **kwargs) -> KernelObservation:
        """Judge ``action.reply`` in this episode (a fresh instance first resets on ``action.task``)."""
        if not self._started:
            if not action.task:
                raise BadRequest("no episode in this session: send reset first, or give action.task for a "
                                 "stateless single-turn /step")
            self.reset(task=action.task)
        elif action.task is not None and action.task != self.env.task_id:
            raise BadRequest(f"action.task {action.task!r} is not this episode's task {self.env.task_id!r}")
        if self._state.done:
            raise BadRequest("the episode is over: send reset to start another")
        candidate, verdict = self.env.prepare_step(action.reply)
        if verdict is None:
            verdict = self.queue.judge(self.env.task_id, candidate, timeout_s)
        obs, reward, terminated, truncated, info = self.env.finish_step(candidate, verdict)
        self._state.step_count += 1
        self._state.turn, self._state.best_speedup = info["turn"], info["best_speedup"]
        self._state.done = terminated or truncated
        return self._observation(obs, reward=reward, done=self._state.done, terminated=terminated,
                                 truncated=truncated, verdict=info["verdict"])

    @property
    def state(self) -> KernelState:
        return self._state

    def get_metadata(self) -> EnvironmentMetadata:
        return EnvironmentMetadata(name="hawkeye/KernelOpt-v3", version="v1",
                                   description="Write or edit a Triton kernel for one task; every step is judged "
                                               "by hawkeye's evaluator (reward v3).")

    def close(self) -> None:
        self.env.close()

    def _observation(self, obs: dict, **fields) -> KernelObservation:
        return KernelObservation(
            task_id=self.env.task_id, prompt=obs["prompt"], messages=json.loads(obs["messages"]), task=obs["task"],
            source=obs["source"], feedback=obs["feedback"], turn=int(obs["turn"]), max_turns=self.env.max_turns,
            best_speedup=float(obs["best_speedup"][0]), **fields,
        )


__all__ = ["BadRequest", "HawkeyeEnvironment"]
