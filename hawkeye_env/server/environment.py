"""``HawkeyeEnvironment``: one OpenEnv session's episode of ``hawkeye/KernelOpt-v3``.

Each WebSocket session of the server gets its own instance (its own ``KernelOptEnv``: task, source,
turn, best speedup), and every instance judges through the one ``JudgeQueue`` of the server, so
the evaluator, its results store and its GPU lanes are shared. A step is ``KernelOptEnv``'s own
two halves (``prepare_step``, ``finish_step``) with the verdict from the queue in between, so a
served step gives the same reward, feedback and episode end as ``env.step``.

The server awaits ``step_async`` on its event loop: the halves run in a thread, and the verdict
is awaited with the queue's client key of the connection (``guard.current()``: one per WebSocket
session, one per HTTP peer). A step whose client disconnects, or whose ``timeout_s`` (stateless
HTTP ``/step``) passes, withdraws its candidate: never judged if it was still waiting, else
judged to the end and stored as usual (its verdict is the candidate's own).

Stateless HTTP (OpenEnv's ``POST /reset`` and ``POST /step`` build a fresh instance per request):
``/step`` with ``{"action": {"reply": ..., "task": "vector_add_fp32"}}`` judges one single-turn
reply on that task; multi-turn episodes use the WebSocket session (``HawkeyeEnvClient``). Errors
the server answers (WebSocket: an error message; HTTP: the status in brackets): ``BadRequest``
(400: unknown task or reset option, a step before reset or after the end, a start source over
``MAX_SOURCE_CHARS``), ``Busy`` (429: the client is at the queue's per-client bound) and
``Withdrawn`` (504: ``timeout_s`` passed first).
"""

from __future__ import annotations

import asyncio
import json
import logging
import uuid
from importlib.metadata import PackageNotFoundError, version

from hawkeye_env.edits import MAX_REPLY_CHARS
from hawkeye_env.env import KernelOptEnv
from hawkeye_env.judge.shared.verdict import Verdict
from hawkeye_env.registration import KERNEL_OPT_ID
from hawkeye_env.server import guard, require_openenv
from hawkeye_env.server.judge_queue import JudgeQueue, QueueFull
from hawkeye_env.tasks.registry import registered_ids
from hawkeye_env.tasks.selection import task_split
from reward import REWARD_VERSION

require_openenv()

from openenv.core.env_server.interfaces import Environment  # noqa: E402
from openenv.core.env_server.types import EnvironmentMetadata  # noqa: E402

from hawkeye_env.server.models import KernelAction, KernelObservation, KernelState  # noqa: E402

log = logging.getLogger(__name__)
RESET_OPTIONS = ("task", "source")
#: Longest start source ``reset`` takes: a source is at most what one reply may carry.
MAX_SOURCE_CHARS = MAX_REPLY_CHARS
#: Served task ids a refused ``reset`` names (a server of a generated split serves thousands).
NAMED_TASKS = 8


class BadRequest(ValueError):
    """A request the env cannot serve; its message says why and what to send instead."""


class Busy(RuntimeError):
    """The client already has as many candidates waiting or judged as the server allows."""


class Withdrawn(TimeoutError):
    """The step's ``timeout_s`` passed before its verdict; the candidate was withdrawn."""


def package_version() -> str:
    """The installed ``hawkeye-env`` version (``unknown`` when run from a tree that is not installed)."""
    try:
        return version("hawkeye-env")
    except PackageNotFoundError:
        return "unknown"


def not_served(task: str, served: tuple[str, ...]) -> str:
    """Why ``reset(task=task)`` is refused: the task's split when it is registered (a server started
    on ``split:train`` refuses a validation task), and the first ``NAMED_TASKS`` it serves."""
    where = f" (a {task_split(task)} task)" if task in set(registered_ids()) else ""
    more = f", ... ({len(served)} tasks)" if len(served) > NAMED_TASKS else ""
    return f"unknown task {task!r} for this server{where}; it serves: {', '.join(served[:NAMED_TASKS])}{more}"


class HawkeyeEnvironment(Environment[KernelAction, KernelObservation, KernelState]):
    """OpenEnv ``Environment`` over one ``KernelOptEnv`` judged through a shared ``JudgeQueue``.

    Args:
        queue: the server's ``JudgeQueue`` (its evaluator and device are the env's).
        **env_kwargs: ``KernelOptEnv`` arguments (``tasks``: ids or ``split:NAME``, as the env takes
            them; ``context``, ``context_budget_chars``,
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
            raise BadRequest(not_served(task, self.env.tasks))
        if source is not None and not isinstance(source, str):
            raise BadRequest("source must be a string")
        if source is not None and len(source) > MAX_SOURCE_CHARS:
            raise BadRequest(f"source is {len(source)} characters, over the {MAX_SOURCE_CHARS} character limit")
        options = {k: v for k, v in (("task", task), ("source", source)) if v is not None}
        obs, info = self.env.reset(seed=seed, options=options)
        self._state = KernelState(episode_id=episode_id or str(uuid.uuid4()), step_count=0, task_id=info["task"])
        self._started = True
        return self._observation(obs, reward=None, done=False, terminated=False, truncated=False, verdict=None)

    def step(self, action: KernelAction, timeout_s: float | None = None, **kwargs) -> KernelObservation:
        """Judge ``action.reply`` in this episode, blocking (the server awaits ``step_async``)."""
        client = f"env:{id(self)}"
        candidate, verdict = self._prepare(action, client)
        if verdict is None:
            try:
                verdict = self.queue.judge(self.env.task_id, candidate, timeout_s, client)
            except QueueFull as exc:
                raise Busy(str(exc)) from None
            except TimeoutError:
                raise Withdrawn(f"no verdict within timeout_s={timeout_s:g}; the candidate was withdrawn if it "
                                "was still waiting") from None
        return self._finish(candidate, verdict)

    async def step_async(self, action: KernelAction, timeout_s: float | None = None, **kwargs) -> KernelObservation:
        """Judge ``action.reply`` in this episode; see the module docstring for withdrawal."""
        conn = guard.current()
        client = conn.key if conn is not None else f"env:{id(self)}"
        candidate, verdict = await asyncio.to_thread(self._prepare, action, client)
        if verdict is None:
            verdict = await self._verdict(candidate, client, conn, timeout_s)
        return await asyncio.to_thread(self._finish, candidate, verdict)

    @property
    def state(self) -> KernelState:
        return self._state

    def get_metadata(self) -> EnvironmentMetadata:
        return EnvironmentMetadata(
            name=KERNEL_OPT_ID, version=package_version(),
            description=f"Write or edit a Triton kernel for one task; every step is judged by hawkeye's "
                        f"evaluator (reward {REWARD_VERSION}).")

    def close(self) -> None:
        self.env.close()

    def _prepare(self, action: KernelAction, client: str) -> tuple[str, Verdict | None]:
        """``KernelOptEnv.prepare_step`` after refusing a step the episode or the queue cannot take
        (a stateless step first resets on ``action.task``)."""
        if not self._started:
            if not action.task:
                raise BadRequest("no episode in this session: send reset first, or give action.task for a "
                                 "stateless single-turn /step")
            self.reset(task=action.task)
        elif action.task is not None and action.task != self.env.task_id:
            raise BadRequest(f"action.task {action.task!r} is not this episode's task {self.env.task_id!r}")
        if self._state.done:
            raise BadRequest("the episode is over: send reset to start another")
        try:
            self.queue.admit(client)
        except QueueFull as exc:
            raise Busy(str(exc)) from None
        return self.env.prepare_step(action.reply)

    async def _verdict(self, candidate: str, client: str, conn: guard.Connection | None,
                       timeout_s: float | None) -> Verdict:
        """The queue's verdict, or ``Withdrawn`` when ``timeout_s`` passes or the client leaves first."""
        try:
            future = self.queue.submit(self.env.task_id, candidate, client)
        except QueueFull as exc:
            raise Busy(str(exc)) from None
        waiter = asyncio.wrap_future(future)
        watchers = {waiter} | ({asyncio.ensure_future(conn.gone.wait())} if conn is not None else set())
        try:
            await asyncio.wait(watchers, timeout=timeout_s, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for w in watchers - {waiter}:
                w.cancel()
            if not waiter.done():
                fate = ("withdrawn before it was judged" if self.queue.give_up(future) else
                        "still being judged (its verdict is stored)")
                waiter.cancel()
                why = ("the client left" if conn is not None and conn.gone.is_set() else
                       f"timeout_s={timeout_s:g} passed" if timeout_s is not None else "the server stopped the step")
                log.info("step of %s on %s given up (%s): candidate %s", client, self.env.task_id, why, fate)
        if waiter.cancelled():
            raise Withdrawn(f"{why} before the verdict; the candidate is {fate}")
        return waiter.result()

    def _finish(self, candidate: str, verdict: Verdict) -> KernelObservation:
        obs, reward, terminated, truncated, info = self.env.finish_step(candidate, verdict)
        self._state.step_count += 1
        self._state.turn, self._state.best_speedup = info["turn"], info["best_speedup"]
        self._state.done = terminated or truncated
        return self._observation(obs, reward=reward, done=self._state.done, terminated=terminated,
                                 truncated=truncated, verdict=info["verdict"])

    def _observation(self, obs: dict, **fields) -> KernelObservation:
        return KernelObservation(
            task_id=self.env.task_id, prompt=obs["prompt"], messages=json.loads(obs["messages"]), task=obs["task"],
            source=obs["source"], feedback=obs["feedback"], turn=int(obs["turn"]), max_turns=self.env.max_turns,
            best_speedup=float(obs["best_speedup"][0]), **fields,
        )


__all__ = ["MAX_SOURCE_CHARS", "BadRequest", "Busy", "HawkeyeEnvironment", "Withdrawn", "package_version"]
